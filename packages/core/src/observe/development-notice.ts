const told = new Set<string>();

/**
 * Prints `text` on the console once per process and `key`, outside `NODE_ENV=production`: what a store
 * promises, said when the first one is made. A console line, because the default logger shows no info and
 * a notice is no warning about a delivery; silent in production, where the choice has been made.
 *
 * @example
 * ```ts
 * // in a lease store's constructor
 * developmentNotice('MyStore', '[service-pay] MyStore is a lease store: make the credit idempotent.');
 * ```
 */
export function developmentNotice(key: string, text: string): void {
  if (told.has(key) || globalThis.process?.env?.NODE_ENV === 'production') return;
  told.add(key);
  console.info(text);
}

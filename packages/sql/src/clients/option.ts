/**
 * `options[name]` if it is the client a store's options name: an object (or, for Knex, a function) with
 * each of `methods`. `undefined` for anything else, so the store says what it wanted in its own words.
 *
 * @example
 * ```ts
 * const db = clientOption<Kysely<DB>>(options, 'db', ['transaction', 'selectFrom']);
 * if (db === undefined) throw new TypeError('KyselyStore: options.db must be a Kysely instance.');
 * ```
 */
export function clientOption<T>(
  options: unknown,
  name: string,
  methods: readonly string[],
  kind: 'object' | 'function' = 'object',
): T | undefined {
  const value = (options as Record<string, unknown> | null | undefined)?.[name] as Record<string, unknown> | null;
  if (value === null || typeof value !== kind) return undefined;
  return methods.every((method) => typeof value[method] === 'function') ? (value as T) : undefined;
}

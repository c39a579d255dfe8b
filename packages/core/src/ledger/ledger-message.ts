/** How long an entry's error message may be: enough for a database's error, never a whole dump. */
export const LEDGER_MESSAGE_MAX = 500;

/**
 * An error's message as an entry keeps it: the first `LEDGER_MESSAGE_MAX` characters, control characters
 * as spaces, and every webhook secret the handler was given replaced by `[secret]` (a handler's error can
 * quote its configuration). The pipeline never hands the body or the signature to a handler's error; the
 * code and this message are all the ledger keeps of an error.
 *
 * @example
 * ```ts
 * ledgerMessage(new Error('column "paid_at" does not exist'), ['whsec_1']); // 'column "paid_at" does not exist'
 * ```
 */
export function ledgerMessage(error: unknown, secrets: readonly string[] = []): string {
  let text: string;
  try {
    text = error instanceof Error ? `${error.message}` : typeof error === 'string' ? error : String(error);
  } catch {
    text = 'an error that could not be read';
  }
  for (const secret of secrets) if (secret.length >= 4) text = text.split(secret).join('[secret]');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
  text = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  if (text.length > LEDGER_MESSAGE_MAX) text = `${text.slice(0, LEDGER_MESSAGE_MAX - 1)}…`;
  return text === '' ? '(no message)' : text;
}

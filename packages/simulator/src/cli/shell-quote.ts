/** Quotes a word for POSIX shells: single quotes, with embedded single quotes closed, escaped, reopened. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** A copy-paste curl command, one option per line. */
export function curlCommand(
  method: string,
  url: string,
  headers: Record<string, string>,
  body: string | undefined,
): string {
  const lines = [`curl -sS -X ${method} ${shellQuote(url)}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`  -H ${shellQuote(`${name}: ${value}`)}`);
  if (body !== undefined) lines.push(`  --data-raw ${shellQuote(body)}`);
  return lines.join(' \\\n');
}

/**
 * The fields of a PostgreSQL row value in its text form (what `record_out` writes, e.g. `(t,f,,4711,"a b")`):
 * an empty field is NULL, a quoted one may hold commas, parentheses and spaces, with `""` or `\"` for a quote
 * and `\\` for a backslash (an empty string is `""`). The claim reads its function's result this way: one text
 * column costs the server less than the function's columns selected from it (no function scan), and every
 * client reads a text column alike.
 *
 * @example
 * ```ts
 * readRecordText('(t,f,,4711,"a,b")'); // ['t', 'f', null, '4711', 'a,b']
 * ```
 */
export function readRecordText(text: string): Array<string | null> {
  if (text.length < 2 || text[0] !== '(' || text[text.length - 1] !== ')') {
    throw new TypeError(`not a row value: ${JSON.stringify(text.slice(0, 80))}`);
  }
  const fields: Array<string | null> = [];
  const end = text.length - 1;
  let i = 1;
  for (;;) {
    if (text[i] === '"') {
      let value = '';
      i++;
      for (;;) {
        if (i >= end) throw new TypeError(`unterminated field in a row value: ${JSON.stringify(text.slice(0, 80))}`);
        const c = text[i] as string;
        if (c === '\\') {
          value += text[i + 1] ?? '';
          i += 2;
        } else if (c === '"') {
          if (text[i + 1] === '"') {
            value += '"';
            i += 2;
          } else {
            i++;
            break;
          }
        } else {
          value += c;
          i++;
        }
      }
      fields.push(value);
    } else {
      let next = text.indexOf(',', i);
      if (next === -1 || next > end) next = end;
      fields.push(next === i ? null : text.slice(i, next));
      i = next;
    }
    if (i >= end) return fields;
    if (text[i] !== ',') throw new TypeError(`malformed row value: ${JSON.stringify(text.slice(0, 80))}`);
    i++;
  }
}

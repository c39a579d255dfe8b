/**
 * True only for PartiQL text that DynamoDB can run as nothing but one `SELECT`: leading whitespace,
 * `--` line comments, `/* *\/` block comments and opening parentheses are read as DynamoDB reads them,
 * then the first word must be `SELECT`, and no `;` may start a second statement. Everything else is
 * judged a write (default-deny): an `INSERT`, `UPDATE`, `DELETE`, `UPSERT`, `EXISTS`, an unclosed
 * comment or string, a block comment that opens another inside it (whether it nests is not ours to
 * guess), text that is not a string.
 *
 * @example
 * ```ts
 * isPartiqlSelect('/* audit *\/ SELECT * FROM "orders"'); // true
 * isPartiqlSelect('-- c\nINSERT INTO "credits" VALUE {\'pk\': 1}'); // false
 * ```
 */
export function isPartiqlSelect(statement: unknown): boolean {
  if (typeof statement !== 'string') return false;
  const start = firstToken(statement, 0);
  if (start === undefined) return false;
  if (!/^select(?![\w$])/i.test(statement.slice(start))) return false;
  return !secondStatement(statement, start + 'select'.length);
}

/** Where the first token after `from` starts, past whitespace, comments and `(`; undefined if none or unclear. */
function firstToken(text: string, from: number): number | undefined {
  let i = from;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c) || c === '(') {
      i++;
    } else if (text.startsWith('--', i)) {
      const end = text.indexOf('\n', i);
      if (end < 0) return undefined;
      i = end + 1;
    } else if (text.startsWith('/*', i)) {
      const end = blockCommentEnd(text, i);
      if (end === undefined) return undefined;
      i = end;
    } else {
      return i;
    }
  }
  return undefined;
}

/** The index after the block comment opened at `at`, or undefined when unclosed or holding another `/*`. */
function blockCommentEnd(text: string, at: number): number | undefined {
  const close = text.indexOf('*/', at + 2);
  if (close < 0) return undefined;
  if (text.slice(at + 2, close).includes('/*')) return undefined;
  return close + 2;
}

/**
 * True when a `;` outside strings, quoted names and comments is followed by anything but whitespace and
 * comments, or when the text cannot be read to its end (an unclosed string or comment).
 */
function secondStatement(text: string, from: number): boolean {
  let i = from;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === "'" || c === '"') {
      // '' and "" escape a quote inside a string or a quoted name.
      let j = i + 1;
      for (;;) {
        const next = text.indexOf(c, j);
        if (next < 0) return true;
        if (text[next + 1] === c) {
          j = next + 2;
          continue;
        }
        i = next + 1;
        break;
      }
    } else if (text.startsWith('--', i)) {
      const end = text.indexOf('\n', i);
      if (end < 0) return false;
      i = end + 1;
    } else if (text.startsWith('/*', i)) {
      const end = blockCommentEnd(text, i);
      if (end === undefined) return true;
      i = end;
    } else if (c === ';') {
      return firstRealToken(text, i + 1);
    } else {
      i++;
    }
  }
  return false;
}

/** True when anything but whitespace, `;` and comments follows `from` (or the rest cannot be read). */
function firstRealToken(text: string, from: number): boolean {
  let i = from;
  while (i < text.length) {
    const c = text[i] as string;
    if (/\s/.test(c) || c === ';') i++;
    else if (text.startsWith('--', i)) {
      const end = text.indexOf('\n', i);
      if (end < 0) return false;
      i = end + 1;
    } else if (text.startsWith('/*', i)) {
      const end = blockCommentEnd(text, i);
      if (end === undefined) return true;
      i = end;
    } else return true;
  }
  return false;
}

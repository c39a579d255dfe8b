import { OwnTransactionError, WriteOutsideTransactionError } from '@service-pay/core/node';

/**
 * What a statement sent beside `ctx.tx` would do, as the write guard judges it: `read` (allowed), `write`
 * (it would commit on its own: refused) or `transaction` (it opens a transaction of its own: refused).
 */
export type StatementKind = 'read' | 'write' | 'transaction';

/** Statements whose first word alone makes them a write. */
const WRITES = new Set(['insert', 'update', 'delete', 'merge', 'copy', 'replace', 'upsert']);
/** Statements that open a transaction (`BEGIN`, `START TRANSACTION`). */
const OPENS = new Set(['begin', 'start']);
/** Inside a `WITH` (a CTE may modify data) or after a `SELECT`: a write or a row lock. */
const MODIFIES = /\b(?:insert|update|delete|merge)\b/;
const LOCKS = /\bfor\s+(?:no\s+key\s+)?update\b|\bfor\s+(?:key\s+)?share\b|\block\s+in\s+share\s+mode\b/;

/**
 * Judges SQL text for the write guard, whatever the dialect: comments, string literals and quoted names are
 * skipped (so `'delete'` in a value or a `"update"` column is no write), case and leading whitespace do not
 * matter, each of several `;`-separated statements counts, a data-modifying `WITH` and `SELECT ... FOR
 * UPDATE / FOR SHARE / LOCK IN SHARE MODE` are writes (a row lock taken outside the delivery would block
 * it). Anything that is not text (a prepared object the client did not say the text of) is a read.
 *
 * @example
 * ```ts
 * statementKind('/* audit *\/ WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x'); // 'write'
 * statementKind("select 'insert' from t"); // 'read'
 * ```
 */
export function statementKind(text: unknown): StatementKind {
  if (typeof text !== 'string') return 'read';
  let kind: StatementKind = 'read';
  for (const part of withoutLiterals(text).split(';')) {
    const words = /^[\s(]*([a-z]+)/.exec(part);
    if (words === null) continue;
    const first = words[1] as string;
    if (OPENS.has(first) && (first === 'begin' || /^[\s(]*start\s+transaction\b/.test(part))) return 'transaction';
    if (WRITES.has(first) || (first === 'with' && MODIFIES.test(part)) || LOCKS.test(part)) kind = 'write';
  }
  return kind;
}

/**
 * The text in lower case with comments, string literals (`'...'`, `E'...'`, `$tag$...$tag$`) and quoted
 * names (`"..."`, `` `...` ``) each replaced by a space, so no keyword inside them is seen.
 */
function withoutLiterals(text: string): string {
  let out = '';
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i] as string;
    const next = text[i + 1];
    if (c === '-' && next === '-') {
      const end = text.indexOf('\n', i);
      i = end === -1 ? n : end;
      out += ' ';
    } else if (c === '#' && !/\w/.test(text[i - 1] ?? '')) {
      // MySQL's line comment (never part of a word there; PostgreSQL's # operator is rare in a write).
      const end = text.indexOf('\n', i);
      i = end === -1 ? n : end;
      out += ' ';
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
      out += ' ';
    } else if (c === "'" || c === '"' || c === '`') {
      i = closing(text, i, c);
      out += ' ';
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(text.slice(i))?.[0];
      if (tag === undefined) {
        out += c;
        i += 1;
      } else {
        const end = text.indexOf(tag, i + tag.length);
        i = end === -1 ? n : end + tag.length;
        out += ' ';
      }
    } else {
      out += c.toLowerCase();
      i += 1;
    }
  }
  return out;
}

/** The index after the quote closing the one at `start` (a doubled quote or a backslash escapes it). */
function closing(text: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\' && quote === "'") i += 2;
    else if (c === quote && text[i + 1] === quote) i += 2;
    else if (c === quote) return i + 1;
    else i += 1;
  }
  return text.length;
}

/**
 * What a guard answers for SQL text sent beside `ctx.tx` during a delivery of `store`: nothing for a read,
 * `OwnTransactionError` for a statement that opens a transaction, `WriteOutsideTransactionError` for a
 * write, each naming how it was sent (`via`) and the statement's first words.
 *
 * @example
 * ```ts
 * const error = statementRefusal('KyselyStore', 'insert into credits ...', 'pool.query');
 * ```
 */
export function statementRefusal(store: string, text: unknown, via: string): Error | undefined {
  const kind = statementKind(text);
  if (kind === 'read') return undefined;
  const head = typeof text === 'string' ? text.trim().split(/\s+/).slice(0, 3).join(' ') : '';
  return kind === 'transaction'
    ? new OwnTransactionError(store, `${via} with ${head}`)
    : new WriteOutsideTransactionError(store, `${via}: ${head} …`);
}

import { OwnTransactionError, WriteOutsideTransactionError } from '@service-pay/core/node';

/**
 * What a statement sent beside `ctx.tx` would do, as the write guard's text check judges it: `read`
 * (plainly a read: it may pass, and still runs where the server refuses writes), `write` (anything else:
 * refused), `transaction` (it opens a transaction of its own: refused) or `end` (`COMMIT`, `ROLLBACK`: it
 * ends one, which writes nothing by itself).
 */
export type StatementKind = 'read' | 'write' | 'transaction' | 'end';

/**
 * Whose rules a statement is read by: PostgreSQL's (nested block comments, `$tag$` quotes, `#` an
 * operator, a backslash plain in a standard string) or MySQL's and MariaDB's (`#` and `-- ` comments,
 * `/*! ... *\/` executable comments, backslash escapes unless `NO_BACKSLASH_ESCAPES`).
 */
export type SqlDialectName = 'postgres' | 'mysql';

/** How one dialect, in one of its server settings, splits text into code, comments and literals. */
interface Lexicon {
  readonly nestedComments: boolean;
  readonly hashComments: boolean;
  /** `--` starts a comment only before a space or a control character (MySQL). */
  readonly dashDashNeedsSpace: boolean;
  readonly dollarQuotes: boolean;
  /** `/*!` and `/*M!` are code the server runs, not comments. */
  readonly executableComments: boolean;
  /** A backslash escapes the next character in every string, not only in `E'...'`. */
  readonly backslashInStrings: boolean;
  readonly doubleQuoteIsString: boolean;
}

const POSTGRES: Lexicon = {
  nestedComments: true,
  hashComments: false,
  dashDashNeedsSpace: false,
  dollarQuotes: true,
  executableComments: false,
  backslashInStrings: false,
  doubleQuoteIsString: false,
};
/** `standard_conforming_strings = off`: a server setting the text cannot see, so it is read both ways. */
const POSTGRES_ESCAPING: Lexicon = { ...POSTGRES, backslashInStrings: true };
const MYSQL: Lexicon = {
  nestedComments: false,
  hashComments: true,
  dashDashNeedsSpace: true,
  dollarQuotes: false,
  executableComments: true,
  backslashInStrings: true,
  doubleQuoteIsString: true,
};
/** `sql_mode` with `NO_BACKSLASH_ESCAPES`. */
const MYSQL_PLAIN: Lexicon = { ...MYSQL, backslashInStrings: false };

const LEXICONS: Record<SqlDialectName | 'any', readonly Lexicon[]> = {
  postgres: [POSTGRES, POSTGRES_ESCAPING],
  mysql: [MYSQL, MYSQL_PLAIN],
  any: [POSTGRES, POSTGRES_ESCAPING, MYSQL, MYSQL_PLAIN],
};

/** A data-modifying word anywhere in a `WITH` or an `EXPLAIN`. */
const MODIFIES = /\b(?:insert|update|delete|merge|copy|call|do|execute)\b/;
/** A row lock, or a `SELECT ... INTO` (a new table on PostgreSQL, a file or variables on MySQL). */
const LOCKS = /\bfor\s+(?:no\s+key\s+)?update\b|\bfor\s+(?:key\s+)?share\b|\block\s+in\s+share\s+mode\b|\binto\b/;
const ENDS = new Set(['commit', 'rollback', 'end', 'abort']);

/**
 * The write guard's text check, default-deny: `read` only for what is plainly a read, one statement of
 * `SELECT`, `WITH ... SELECT`, `VALUES`, `TABLE`, `SHOW`, or `EXPLAIN` / `DESCRIBE` without `ANALYZE`,
 * and no row lock, `INTO` or data-modifying word in it; comments, string literals and quoted names are
 * skipped as the server skips them, in each of the dialect's string settings (with no `dialect`: every
 * dialect's), and the text is a read only if it reads as one in all of them. A MySQL executable comment,
 * a second statement, an unknown first word, text that is not a string, or a literal left open is not
 * plainly a read. A read may still call a function that writes: the guards run it where the server
 * refuses writes.
 *
 * @example
 * ```ts
 * statementKind('/* audit *\/ WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x'); // 'write'
 * statementKind('call credit($1)'); // 'write'
 * statementKind("select 'insert' from t"); // 'read'
 * ```
 */
export function statementKind(text: unknown, dialect?: SqlDialectName): StatementKind {
  if (typeof text !== 'string') return 'write';
  let kind: StatementKind | undefined;
  for (const lexicon of LEXICONS[dialect ?? 'any']) {
    const one = kindOf(text, lexicon);
    if (kind === undefined || rank(one) > rank(kind)) kind = one;
  }
  return kind ?? 'write';
}

/** How much a kind refuses: the strictest reading of a text wins. */
function rank(kind: StatementKind): number {
  return kind === 'read' ? 0 : kind === 'end' ? 1 : kind === 'write' ? 2 : 3;
}

function kindOf(text: string, lexicon: Lexicon): StatementKind {
  const code = codeOf(text, lexicon);
  if (code === undefined) return 'write';
  const parts = code.split(';').filter((part) => part.trim() !== '');
  if (parts.length === 0) return 'read';
  const kinds = parts.map(kindOfOne);
  if (kinds.includes('transaction')) return 'transaction';
  if (parts.length > 1) return 'write';
  return kinds[0] as StatementKind;
}

function kindOfOne(part: string): StatementKind {
  const first = /^[\s(]*([a-z]+)/.exec(part)?.[1];
  switch (first) {
    case 'select':
    case 'values':
    case 'table':
      return LOCKS.test(part) || /\b(?:insert|update|delete|merge)\b/.test(part) ? 'write' : 'read';
    case 'with':
      return LOCKS.test(part) || MODIFIES.test(part) ? 'write' : 'read';
    case 'show':
      return 'read';
    case 'explain':
    case 'describe':
    case 'desc':
      return /\banaly[sz]e\b/.test(part) || MODIFIES.test(part) || LOCKS.test(part) ? 'write' : 'read';
    case 'begin':
      return 'transaction';
    case 'start':
      return /^[\s(]*start\s+transaction\b/.test(part) ? 'transaction' : 'write';
    default:
      return first !== undefined && ENDS.has(first) && !/\b(?:and\s+chain)\b/.test(part) ? 'end' : 'write';
  }
}

const WORD = /[A-Za-z0-9_$\u0080-\uffff]/;

/**
 * The text in lower case with comments, string literals and quoted names each replaced by a space, so
 * no keyword inside them is seen; undefined when a literal or comment is left open, or (MySQL) the text
 * holds an executable comment: neither is plainly a read.
 */
function codeOf(text: string, lexicon: Lexicon): string | undefined {
  let out = '';
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i] as string;
    const next = text[i + 1];
    if (c === '-' && next === '-' && (!lexicon.dashDashNeedsSpace || i + 2 >= n || text.charCodeAt(i + 2) <= 32)) {
      const end = text.indexOf('\n', i);
      i = end === -1 ? n : end;
      out += ' ';
    } else if (c === '#' && lexicon.hashComments) {
      const end = text.indexOf('\n', i);
      i = end === -1 ? n : end;
      out += ' ';
    } else if (c === '/' && next === '*') {
      if (lexicon.executableComments && /^\/\*M?!/.test(text.slice(i, i + 4))) return undefined;
      const end = blockCommentEnd(text, i, lexicon.nestedComments);
      if (end === undefined) return undefined;
      i = end;
      out += ' ';
    } else if (c === "'" || c === '`' || c === '"') {
      const escapes =
        c === "'" && (lexicon.backslashInStrings || (/[eE]/.test(text[i - 1] ?? '') && !WORD.test(text[i - 2] ?? '')));
      const end = closing(
        text,
        i,
        c,
        escapes || (c === '"' && lexicon.doubleQuoteIsString && lexicon.backslashInStrings),
      );
      if (end === undefined) return undefined;
      i = end;
      out += ' ';
    } else if (c === '$' && lexicon.dollarQuotes && !WORD.test(text[i - 1] ?? '')) {
      const tag = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/.exec(text.slice(i))?.[0];
      if (tag === undefined) {
        out += c;
        i += 1;
      } else {
        const end = text.indexOf(tag, i + tag.length);
        if (end === -1) return undefined;
        i = end + tag.length;
        out += ' ';
      }
    } else {
      out += c.toLowerCase();
      i += 1;
    }
  }
  return out;
}

/** The index after the block comment opened at `start` (PostgreSQL's nest), or undefined if left open. */
function blockCommentEnd(text: string, start: number, nested: boolean): number | undefined {
  let depth = 1;
  let i = start + 2;
  while (i < text.length) {
    if (text[i] === '*' && text[i + 1] === '/') {
      depth -= 1;
      i += 2;
      if (depth === 0 || !nested) return i;
    } else if (nested && text[i] === '/' && text[i + 1] === '*') {
      depth += 1;
      i += 2;
    } else i += 1;
  }
  return undefined;
}

/** The index after the quote closing the one at `start` (a doubled quote, or a backslash if `escapes`). */
function closing(text: string, start: number, quote: string, escapes: boolean): number | undefined {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === '\\' && escapes) i += 2;
    else if (c === quote && text[i + 1] === quote) i += 2;
    else if (c === quote) return i + 1;
    else i += 1;
  }
  return undefined;
}

/**
 * What a guard answers for SQL text sent beside `ctx.tx` during a delivery of `store`: nothing for a
 * plain read (or a `COMMIT` / `ROLLBACK`, which writes nothing by itself), `OwnTransactionError` for a
 * statement that opens a transaction, `WriteOutsideTransactionError` for anything else, each naming how it
 * was sent (`via`) and the statement's first words.
 *
 * @example
 * ```ts
 * const error = statementRefusal('KyselyStore', 'insert into credits ...', 'pool.query', 'postgres');
 * ```
 */
export function statementRefusal(
  store: string,
  text: unknown,
  via: string,
  dialect?: SqlDialectName,
): Error | undefined {
  const kind = statementKind(text, dialect);
  if (kind === 'read' || kind === 'end') return undefined;
  const head =
    typeof text === 'string' ? text.trim().split(/\s+/).slice(0, 3).join(' ') : 'a statement without its text';
  return kind === 'transaction'
    ? new OwnTransactionError(store, `${via} with ${head}`)
    : new WriteOutsideTransactionError(store, `${via}: ${head} …`);
}

/**
 * True for the server's refusal of a write in a read-only transaction: PostgreSQL's SQLSTATE 25006
 * (`read_only_sql_transaction`), MySQL's and MariaDB's `ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION` (1792).
 *
 * @example
 * ```ts
 * if (isReadOnlyRefusal(error)) throw new WriteOutsideTransactionError(store, 'pool.query: select credit($1)');
 * ```
 */
export function isReadOnlyRefusal(error: unknown): boolean {
  const e = error as { code?: unknown; errno?: unknown; sqlState?: unknown } | null;
  if (typeof e !== 'object' || e === null) return false;
  return e.code === '25006' || e.errno === 1792 || e.code === 'ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION';
}

/**
 * The refusal that replaces the server's read-only error for a statement the app sent beside `ctx.tx`:
 * the server found a write in what read as a read (a function that inserts, a procedure).
 *
 * @example
 * ```ts
 * const refusal = serverRefusal('PostgresStore', 'select credit($1)', 'pool.query');
 * ```
 */
export function serverRefusal(store: string, text: unknown, via: string): WriteOutsideTransactionError {
  const head = typeof text === 'string' ? text.trim().split(/\s+/).slice(0, 3).join(' ') : 'a statement';
  return new WriteOutsideTransactionError(
    store,
    `${via}: ${head} … wrote on the server, which refused it (the app's client runs read-only during a delivery)`,
  );
}

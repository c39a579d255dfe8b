/**
 * The spellings of a credit that a text check alone was talked around by, per dialect: each writes
 * `marker` into the marks table `table` when sent through the app's client, and must be refused during a
 * delivery. `setup` makes the function and procedure they call (idempotent, sent outside any delivery);
 * `server` marks a form only the server can tell is a write (its text reads as a read).
 */
export interface TalkAroundForm {
  readonly name: string;
  readonly text: (table: string, marker: string) => string;
  /** Only the server can refuse it (a `SELECT` of a function that inserts). */
  readonly server?: true;
  /** Several statements in one text: a client that sends one statement per call fails it anyway. */
  readonly multi?: true;
}

/** A string literal of `value`, quoted for both dialects (the markers are plain ASCII). */
const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

export const POSTGRES_TALK_AROUND: readonly TalkAroundForm[] = [
  { name: 'select credit_fn(...)', text: (t, m) => `select ${t}_credit(${literal(m)})`, server: true },
  { name: 'call credit_proc(...)', text: (t, m) => `call ${t}_credit_proc(${literal(m)})` },
  {
    name: 'do $$ ... insert ... $$',
    text: (t, m) => `do $$ begin insert into ${t} (marker) values (${literal(m)}); end $$`,
  },
  {
    name: 'explain analyze insert',
    text: (t, m) => `explain analyze insert into ${t} (marker) values (${literal(m)})`,
  },
  {
    name: 'prepare ... as insert; execute',
    text: (t, m) => {
      const name = `p_${Math.random().toString(36).slice(2, 10)}`;
      return `prepare ${name} (text) as insert into ${t} (marker) values ($1); execute ${name}(${literal(m)})`;
    },
    multi: true,
  },
  {
    name: 'nested comments /* /* */ */ insert',
    text: (t, m) => `/* /* */ */ insert into ${t} (marker) values (${literal(m)})`,
  },
  {
    name: 'select 5 # 3; insert (# is an operator)',
    text: (t, m) => `select 5 # 3; insert into ${t} (marker) values (${literal(m)})`,
    multi: true,
  },
  {
    name: 'an identifier ending in $$',
    text: (t, m) => `select 1 as a$$; insert into ${t} (marker) values (${literal(m)}); select 1 as b$$`,
    multi: true,
  },
  {
    name: "'\\' in a standard string",
    text: (t, m) => `select '\\' as a; insert into ${t} (marker) values ($q$${m}$q$); select 1 -- '`,
    multi: true,
  },
];

export const MYSQL_TALK_AROUND: readonly TalkAroundForm[] = [
  { name: 'select credit_fn(...)', text: (t, m) => `select ${t}_credit(${literal(m)})`, server: true },
  { name: 'call credit_proc(...)', text: (t, m) => `call ${t}_credit_proc(${literal(m)})` },
  { name: 'do credit_fn(...)', text: (t, m) => `do ${t}_credit(${literal(m)})` },
  { name: '/*! insert */', text: (t, m) => `/*! insert into ${t} (marker) values (${literal(m)}) */` },
  { name: '/*M! insert */', text: (t, m) => `/*M! insert into ${t} (marker) values (${literal(m)}) */` },
  {
    name: "'\\' then a second statement (NO_BACKSLASH_ESCAPES)",
    text: (t, m) => `select '\\' as a; insert into ${t} (marker) values (${literal(m)}); select 1 -- '`,
    multi: true,
  },
];

/**
 * The statements that make the function (`<table>_credit(marker)`) and procedure
 * (`<table>_credit_proc(marker)`) the forms call, each inserting `marker` into `table`.
 *
 * @example
 * ```ts
 * for (const statement of talkAroundSetup('postgres', marks)) await pool.query(statement);
 * ```
 */
export function talkAroundSetup(dialect: 'postgres' | 'mysql', table: string): string[] {
  if (dialect === 'postgres') {
    return [
      `create or replace function ${table}_credit(m text) returns int language plpgsql as $$ begin insert into ${table} (marker) values (m); return 1; end $$`,
      `create or replace procedure ${table}_credit_proc(m text) language plpgsql as $$ begin insert into ${table} (marker) values (m); end $$`,
    ];
  }
  // `if not exists`, never a drop first: a marks table a client's schema names (Prisma's) is shared by test
  // files running at once, and a drop between another file's call and its create failed that call.
  return [
    `create function if not exists ${table}_credit(m varchar(255)) returns int modifies sql data begin insert into ${table} (marker) values (m); return 1; end`,
    `create procedure if not exists ${table}_credit_proc(m varchar(255)) begin insert into ${table} (marker) values (m); commit; end`,
  ];
}

/**
 * The statements that drop what `talkAroundSetup` made.
 *
 * @example
 * ```ts
 * for (const statement of talkAroundTeardown('postgres', marks)) await pool.query(statement);
 * ```
 */
export function talkAroundTeardown(dialect: 'postgres' | 'mysql', table: string): string[] {
  return dialect === 'postgres'
    ? [`drop function if exists ${table}_credit(text)`, `drop procedure if exists ${table}_credit_proc(text)`]
    : [`drop function if exists ${table}_credit`, `drop procedure if exists ${table}_credit_proc`];
}

import type { GuardCase, GuardSubject } from './guard-cases.js';
import { namedOwnTransactions, writeGuardCases } from './guard-cases.js';
import type { OrmClient } from './orm-store-cases.js';

/**
 * One client of the app's as a database's client registry opens it: a store on the app's client, the credit
 * through `ctx.tx` into a marks table WITHOUT a unique constraint (a second credit would show), the app's
 * own client beside it for the write guard's cases, and how to close it all.
 */
export type RegisteredFixture<Tx> = OrmClient<Tx> & {
  /** The marks table as the client names it. */
  marks: string;
  /** What the write guard's cases need beside the store, the credit and the count (see `GuardSubject`). */
  guard: Omit<GuardSubject<Tx>, 'store' | 'write' | 'count'>;
};

/**
 * A line of a database's client registry (`POSTGRES_CLIENTS`, `MYSQL_CLIENTS`): what every shared case
 * list needs to run on a client. A database's registry adds its own fields (the fault rows' app, ...).
 *
 * @example
 * ```ts
 * const knex: RegisteredClient<KnexFixture> = {
 *   id: 'knex',
 *   name: 'KnexStore (Knex)',
 *   open: openKnexFixture,
 *   ownTransactions: ['knex.transaction(fn)'],
 * };
 * ```
 */
export interface RegisteredClient<Fixture> {
  /** Short and unique: the fault app's `DRIVER`, and the fixture's table prefix. */
  readonly id: string;
  /** As test titles name it. */
  readonly name: string;
  /** Opens the fixture on the shared server. */
  open(): Promise<Fixture>;
  /**
   * The names of the fixture's `guard.ownTransactions`, and below of its `guard.apiForms`: a case list is
   * made before its fixture opens, so the names are given here.
   */
  readonly ownTransactions: readonly string[];
  readonly apiForms?: readonly string[];
  /** Own-transaction forms that open their transaction only after a first await (see `GuardSubject`). */
  readonly stepwise?: readonly string[];
  /** The fixture's guard has `callbackPool` (the client's callback API). */
  readonly callbackPool?: boolean;
  /**
   * The app's statements during a delivery are judged by the text check alone (they cannot be run
   * read-only on the server): the forms only the server can refuse are not run on it.
   */
  readonly textOnly?: boolean;
  /**
   * One connection in the test's own process (PGlite): one delivery at a time, and no statement can be
   * interrupted, so the cases that need either (a pool of one, the raw-text spellings) do not apply.
   */
  readonly oneConnection?: boolean;
}

/**
 * The write guard's cases for one registry line, on the fixture `fixture()` returns once it has opened:
 * the case list is made when the test file is collected, before its `beforeAll` opens the fixture, so
 * every part is read from the fixture when a case runs.
 *
 * @example
 * ```ts
 * for (const entry of POSTGRES_CLIENTS) {
 *   let client: RegisteredFixture<never>;
 *   beforeAll(async () => { client = await entry.open(); });
 *   for (const c of registeredGuardCases(entry, () => client, 'postgres')) it(c.name, c.run);
 * }
 * ```
 */
export function registeredGuardCases(
  entry: RegisteredClient<unknown>,
  fixture: () => RegisteredFixture<never>,
  dialect: 'postgres' | 'mysql',
): GuardCase[] {
  const guard = () => fixture().guard;
  const required = <K extends keyof Guard>(key: K) => guard()[key] as NonNullable<Guard[K]>;
  return writeGuardCases<never>({
    store: () => fixture().store(),
    write: (tx, marker) => fixture().write(tx, marker),
    count: (marker) => fixture().count(marker),
    get lazy() {
      return guard().lazy;
    },
    startWrite: (tx, marker) => guard().startWrite(tx, marker),
    globalWrite: (marker) => guard().globalWrite(marker),
    globalRead: () => guard().globalRead(),
    ownTransactions: namedOwnTransactions(entry.ownTransactions, () => guard().ownTransactions),
    ...(entry.stepwise ? { stepwise: entry.stepwise } : {}),
    ...(entry.apiForms ? { apiForms: namedOwnTransactions(entry.apiForms, () => guard().apiForms ?? {}) } : {}),
    ...(entry.callbackPool ? { callbackPool: () => required('callbackPool')() } : {}),
    ...(entry.oneConnection
      ? { oneConnection: true }
      : {
          poolOfOne: () => required('poolOfOne')(),
          raw: {
            dialect,
            get table() {
              return guard()?.raw?.table ?? '';
            },
            send: (text: string) => required('raw').send(text),
            textOnly: entry.textOnly === true,
          },
        }),
  });
}

type Guard = RegisteredFixture<never>['guard'];

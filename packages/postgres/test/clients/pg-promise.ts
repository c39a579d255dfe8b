import pgPromise, { type IBaseProtocol, type ITask } from 'pg-promise';
import { PgPromiseStore } from '../../src/pg-promise.js';
import { DATABASE_URL } from '../support/database.js';
import { type PostgresClient, pgGatedStore, pgPoolToFill, untyped, withTables } from './fixture.js';

/**
 * The marks as a repository, pg-promise's own pattern (`extend`): every database, task and transaction
 * gets one, on its own connection, so `ctx.tx.marks.add(...)` writes in the delivery's transaction.
 */
class MarksRepository {
  constructor(
    private readonly db: IBaseProtocol<Repositories>,
    private readonly table: string,
  ) {}

  add(marker: string): Promise<null> {
    return this.db.none(`insert into ${this.table} (marker) values ($1)`, [marker]);
  }
}

interface Repositories {
  marks: MarksRepository;
}

type Tx = ITask<Repositories> & Repositories;

// One library instance, as an app has; the fixtures' several databases on one server are the tests' doing.
// Each database's context (`dc`) names its marks table.
const pgp = pgPromise<Repositories>({
  noWarnings: true,
  extend(db, dc: { marks: string }) {
    db.marks = new MarksRepository(db, dc.marks);
  },
});

const OWN_TRANSACTIONS = ['db.tx()', 'db.txIf()', 'db.task() then t.tx()', 'db.connect() + BEGIN'] as const;
const API_FORMS = [
  'db.func(credit_fn)',
  'db.proc(credit_proc)',
  'db.task() then t.none(insert)',
  "db.connect() then connection.one('select credit_fn($1)')",
  'db.multi(select 1; insert)',
] as const;

/** pg-promise: `PgPromiseStore` on the app's `pgp(connection)`, `ctx.tx` its `db.tx` transaction. */
export const pgPromiseClient: PostgresClient = {
  id: 'pg-promise',
  name: 'PgPromiseStore (pg-promise)',
  ownTransactions: OWN_TRANSACTIONS,
  stepwise: ['db.connect() + BEGIN'],
  apiForms: API_FORMS,
  open: () =>
    untyped(
      withTables<Tx>('pgp', async (inbox, marks) => {
        const db = pgp({ connectionString: DATABASE_URL, max: 25 }, { marks });
        const insert = `insert into ${marks} (marker) values ($1)`;
        const ownTransaction = async (marker: string) => {
          await db.tx((t) => t.marks.add(marker));
        };
        return {
          name: 'PgPromiseStore (pg-promise)',
          store: () => new PgPromiseStore({ db, tableName: inbox }),
          write: async (tx, marker) => {
            await tx.none(insert, [marker]);
          },
          slowQuery: (tx, ms) => tx.any('select pg_sleep($1)', [ms / 1000]),
          failingQuery: (tx) => tx.any('select 1 / 0'),
          statement: (tx, text) => tx.query(text),
          raw: (tx, text) => tx.query(text),
          exec: (tx, text) => tx.query(text),
          writeInOwnTransaction: ownTransaction,
          guard: {
            lazy: false,
            // Through the repository: what ctx.tx's own methods return is followed, a repository's calls too.
            startWrite: (tx, marker) => tx.marks.add(marker),
            globalWrite: (marker) => db.marks.add(marker),
            globalRead: () => db.any(`select * from ${marks} limit 1`),
            raw: { dialect: 'postgres', table: marks, send: (text) => db.query(text) },
            ownTransactions: {
              'db.tx()': ownTransaction,
              'db.txIf()': (marker) => db.txIf((t) => t.none(insert, [marker])),
              'db.task() then t.tx()': (marker) => db.task((t) => t.tx((inner) => inner.none(insert, [marker]))),
              'db.connect() + BEGIN': async (marker) => {
                const connection = await db.connect();
                try {
                  await connection.none('begin');
                  await connection.none(insert, [marker]);
                  await connection.none('commit');
                } finally {
                  connection.done();
                }
              },
            },
            stepwise: ['db.connect() + BEGIN'],
            apiForms: {
              'db.func(credit_fn)': (marker) => db.func(`${marks}_credit`, [marker]),
              'db.proc(credit_proc)': (marker) => db.proc(`${marks}_credit_proc`, [marker]),
              'db.task() then t.none(insert)': (marker) => db.task((t) => t.none(insert, [marker])),
              "db.connect() then connection.one('select credit_fn($1)')": async (marker) => {
                const connection = await db.connect();
                try {
                  return await connection.one(`select ${marks}_credit($1)`, [marker]);
                } finally {
                  connection.done();
                }
              },
              'db.multi(select 1; insert)': (marker) => db.multi(`select 1; ${insert}`, [marker]),
            },
            poolOfOne: async () => {
              const one = pgp({ connectionString: DATABASE_URL, max: 1 }, { marks });
              return {
                store: new PgPromiseStore({ db: one, tableName: inbox }),
                write: (tx, marker) => tx.none(insert, [marker]),
                globalWrite: (marker) => one.marks.add(marker),
                close: () => one.$pool.end(),
              };
            },
          },
          close: () => db.$pool.end(),
        };
      }),
    ),
  // `db.$pool` is the node-postgres pool under the database: the app's `db.connect()` takes its connection.
  poolToFill: async (tableName) => {
    const one = pgp({ connectionString: DATABASE_URL, max: 1 }, { marks: tableName });
    return pgPoolToFill(one.$pool, new PgPromiseStore({ db: one, tableName }), () => one.$pool.end());
  },
  gatedStore: async (tableName, patch) => {
    const db = pgp({ connectionString: DATABASE_URL, max: 6 }, { marks: tableName });
    return pgGatedStore(db.$pool, patch, new PgPromiseStore({ db, tableName }), () => db.$pool.end());
  },
  app: (databaseUrl) => {
    const db = pgPromise()({ connectionString: databaseUrl, max: 20, connectionTimeoutMillis: 2_000 });
    return {
      store: new PgPromiseStore({ db }),
      exec: (tx, text, params) => (tx as Tx).any(text, params),
      credit: (tx, paymentId, instance) =>
        (tx as Tx).none('insert into credits (payment_id, instance) values ($1, $2)', [paymentId, instance]),
      close: () => db.$pool.end(),
    };
  },
};

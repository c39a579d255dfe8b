import postgres, { type TransactionSql } from 'postgres';
import { guardSql, PostgresJsStore } from '../../src/postgres-js.js';
import { DATABASE_URL } from '../support/database.js';
import { type PostgresClient, untyped, withTables } from './fixture.js';

/** postgres.js: `PostgresJsStore` on the app's `guardSql(postgres(url))`, `ctx.tx` a `TransactionSql`. */
export const postgresJs: PostgresClient = {
  id: 'postgres-js',
  name: 'PostgresJsStore (postgres.js)',
  // postgres.js 3.4.9 apps can die when a held transaction's connection is written to after its backend
  // died (an uncatchable TypeError in postgres.js's own write timer, porsager/postgres#1208). What matters
  // in the fault rows: a crash loses nothing and credits nothing twice.
  appsMayDie: true,
  ownTransactions: ['sql.begin()', 'sql`begin` on a reserved connection'],
  stepwise: ['sql`begin` on a reserved connection'],
  apiForms: [
    'sql`select credit_fn(marker)`',
    'sql.unsafe(select credit_fn($1), [marker]).values()',
    'a reserved connection`select credit_fn(marker)`',
    'a reserved connection.unsafe(select credit_fn($1))',
  ],
  // No poolToFill: postgres.js shows no count of its connections, so a full pool is a plain timeout.
  // No gatedStore: postgres.js's connections have no `query` to hold a ROLLBACK at.
  open: () =>
    untyped(
      withTables<TransactionSql>('pgjs', async (inbox, marks) => {
        const sql = guardSql(postgres(DATABASE_URL, { max: 25, onnotice: () => {} }));
        const ownTransaction = (marker: string) =>
          sql.begin((t) => t`insert into ${t(marks)} (marker) values (${marker})`).then(() => {});
        return {
          name: 'PostgresJsStore (postgres.js)',
          store: () => new PostgresJsStore({ sql, tableName: inbox }),
          write: async (tx, marker) => {
            await tx`insert into ${tx(marks)} (marker) values (${marker})`;
          },
          slowQuery: (tx, ms) => tx`select pg_sleep(${ms / 1000})`,
          failingQuery: (tx) => tx`select 1 / 0`,
          // postgres.js fails its transaction on any failed statement, even one rolled back to a savepoint
          // sent as SQL (its own savepoints are sql.savepoint()): no raw savepoint statement here.
          raw: (tx, text) => tx.unsafe(text),
          exec: (tx, text) => tx.unsafe(text),
          writeInOwnTransaction: ownTransaction,
          guard: {
            lazy: true,
            startWrite: (tx, marker) => tx`insert into ${tx(marks)} (marker) values (${marker})`,
            globalWrite: (marker) => sql`insert into ${sql(marks)} (marker) values (${marker})`,
            globalRead: () => sql`select * from ${sql(marks)} limit 1`,
            raw: { dialect: 'postgres', table: marks, send: (text) => sql.unsafe(text) },
            apiForms: {
              'sql`select credit_fn(marker)`': (marker) => sql`select ${sql(`${marks}_credit`)}(${marker}::text)`,
              'sql.unsafe(select credit_fn($1), [marker]).values()': (marker) =>
                sql.unsafe(`select ${marks}_credit($1)`, [marker]).values(),
              'a reserved connection`select credit_fn(marker)`': async (marker) => {
                const reserved = await sql.reserve();
                try {
                  return await reserved`select ${sql(`${marks}_credit`)}(${marker}::text)`;
                } finally {
                  reserved.release();
                }
              },
              'a reserved connection.unsafe(select credit_fn($1))': async (marker) => {
                const reserved = await sql.reserve();
                try {
                  return await reserved.unsafe(`select ${marks}_credit($1)`, [marker]);
                } finally {
                  reserved.release();
                }
              },
            },
            ownTransactions: {
              'sql.begin()': ownTransaction,
              'sql`begin` on a reserved connection': async (marker) => {
                const reserved = await sql.reserve();
                try {
                  await reserved.unsafe('begin');
                  await reserved.unsafe(`insert into ${marks} (marker) values ($1)`, [marker]);
                  await reserved.unsafe('commit');
                } finally {
                  reserved.release();
                }
              },
            },
            stepwise: ['sql`begin` on a reserved connection'],
            poolOfOne: async () => {
              const one = guardSql(postgres(DATABASE_URL, { max: 1, onnotice: () => {} }));
              return {
                store: new PostgresJsStore({ sql: one, tableName: inbox }),
                write: (tx, marker) => tx`insert into ${tx(marks)} (marker) values (${marker})`,
                globalWrite: (marker) => one`insert into ${one(marks)} (marker) values (${marker})`,
                close: () => one.end({ timeout: 5 }),
              };
            },
          },
          close: () => sql.end({ timeout: 5 }),
        };
      }),
    ),
  app: (databaseUrl) => {
    const sql = postgres(databaseUrl, { max: 20, connect_timeout: 2, onnotice: () => {} });
    const exec = (tx: unknown, text: string, params: unknown[] = []) =>
      (tx as TransactionSql).unsafe(text, params as never[]);
    return {
      store: new PostgresJsStore({ sql }),
      exec,
      credit: (tx, paymentId, instance) =>
        exec(tx, 'insert into credits (payment_id, instance) values ($1, $2)', [paymentId, instance]),
      close: () => sql.end({ timeout: 1 }),
    };
  },
};

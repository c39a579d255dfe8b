import type { PaymentLedger } from '@service-pay/core';
import { UsageError } from './usage-error.js';

/** The shop's ledger, opened from a URL, and how to let go of its connection. */
export interface OpenLedger {
  ledger: PaymentLedger;
  close(): Promise<void>;
}

/** A package the command needs and the app did not install: named, with the command that installs it. */
export class MissingDriverError extends Error {
  readonly code = 'MISSING_DRIVER';
  constructor(packages: string[], cause: unknown) {
    super(
      `reading this database needs ${packages.join(' and ')}, which are not installed here. Install them in your app (npm install ${packages.join(' ')}) and run the command from it.`,
      { cause },
    );
  }
}

/**
 * Loads a store package and its driver only when a command asks for them: the simulator itself depends on
 * neither, so an app installs only the ones for its own database.
 */
async function load<T>(name: string, packages: string[]): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    if (
      (error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' ||
      /Cannot find (module|package)/.test(String(error))
    )
      throw new MissingDriverError(packages, error);
    throw error;
  }
}

/**
 * Opens the ledger behind `--database-url` (`postgres://`, `mysql://`/`mariadb://`, a `.sqlite`/`.db` file or
 * `file:` URL) or `--redis-url`, with the inbox table (or Redis key prefix) the app's store uses. Read-only
 * use: nothing is created (a database without a ledger has no entries).
 *
 * @example
 * ```ts
 * const { ledger, close } = await openLedger({ databaseUrl: 'postgres://localhost/shop' });
 * ```
 */
export async function openLedger(options: {
  databaseUrl?: string | undefined;
  redisUrl?: string | undefined;
  table?: string | undefined;
  keyPrefix?: string | undefined;
}): Promise<OpenLedger> {
  const { databaseUrl, redisUrl, table } = options;
  if ((databaseUrl === undefined) === (redisUrl === undefined))
    throw new UsageError('give one of --database-url (PostgreSQL, MySQL/MariaDB, SQLite) or --redis-url');
  const tableName = table === undefined ? {} : { tableName: table };
  if (redisUrl !== undefined) {
    if (!/^rediss?:\/\//.test(redisUrl)) throw new UsageError('--redis-url must start with redis:// or rediss://');
    const { Redis } = await load<{ Redis: new (url: string, o: object) => { quit(): Promise<unknown> } }>('ioredis', [
      '@service-pay/redis',
      'ioredis',
    ]);
    const { RedisDedupeStore } = await load<{ RedisDedupeStore: new (o: object) => { ledger: PaymentLedger } }>(
      '@service-pay/redis',
      ['@service-pay/redis', 'ioredis'],
    );
    const client = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
    const store = new RedisDedupeStore({
      client,
      ...(options.keyPrefix === undefined ? {} : { keyPrefix: options.keyPrefix }),
    });
    await new Promise((resolve) => setTimeout(resolve, 0));
    return { ledger: store.ledger, close: async () => void (await client.quit()) };
  }
  const url = databaseUrl as string;
  if (/^postgres(ql)?:\/\//.test(url)) {
    const pg = await load<{ default: { Pool: new (o: object) => { end(): Promise<void> } } }>('pg', [
      '@service-pay/postgres',
      'pg',
    ]);
    const { PostgresStore } = await load<{ PostgresStore: new (o: object) => { ledger: PaymentLedger } }>(
      '@service-pay/postgres',
      ['@service-pay/postgres', 'pg'],
    );
    const pool = new pg.default.Pool({ connectionString: url, max: 2 });
    return { ledger: new PostgresStore({ pool, ...tableName, autoMigrate: false }).ledger, close: () => pool.end() };
  }
  if (/^(mysql|mariadb):\/\//.test(url)) {
    const mysql = await load<{ default: { createPool(o: string): { end(): Promise<void> } } }>('mysql2/promise', [
      '@service-pay/mysql',
      'mysql2',
    ]);
    const { MySqlStore } = await load<{ MySqlStore: new (o: object) => { ledger: PaymentLedger } }>(
      '@service-pay/mysql',
      ['@service-pay/mysql', 'mysql2'],
    );
    const pool = mysql.default.createPool(url.replace(/^mariadb:/, 'mysql:'));
    return { ledger: new MySqlStore({ pool, ...tableName, autoMigrate: false }).ledger, close: () => pool.end() };
  }
  if (/^file:|\.(sqlite3?|db)$/.test(url)) {
    const Database = await load<{ default: new (file: string, o: object) => { close(): void } }>('better-sqlite3', [
      '@service-pay/sqlite',
      'better-sqlite3',
    ]);
    const { SqliteStore } = await load<{ SqliteStore: new (o: object) => { ledger: PaymentLedger } }>(
      '@service-pay/sqlite',
      ['@service-pay/sqlite', 'better-sqlite3'],
    );
    const file = url.replace(/^file:(\/\/)?/, '');
    const database = new Database.default(file, { fileMustExist: true });
    return {
      ledger: new SqliteStore({ database, ...tableName, autoMigrate: false }).ledger,
      close: async () => database.close(),
    };
  }
  throw new UsageError(
    `--database-url must be postgres://..., mysql://... (or mariadb://...), or a SQLite file (.sqlite, .db, file:...), got ${JSON.stringify(url.replace(/\/\/[^@/]*@/, '//***@'))}`,
  );
}

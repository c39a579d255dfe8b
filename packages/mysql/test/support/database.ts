import { testServers } from '@service-pay/test-kit';
import mysql from 'mysql2/promise';

/** The machine's MariaDB (root, no password, database `test`; `.ci/run` starts it when it is down). */
/** The shared MariaDB (`TEST_MYSQL_URL`; test-kit's `testServers`). */
export const DATABASE_URL = testServers().mysqlUrl;

/** A table name no other test (or other run on the shared server) uses. */
export function uniqueName(label: string): string {
  return `t_${label}_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

/** A pool on the shared server that says where it tried when the server is not there. */
export async function openPool(options: mysql.PoolOptions = {}): Promise<mysql.Pool> {
  const pool = mysql.createPool({ uri: DATABASE_URL, connectionLimit: 25, ...options });
  try {
    await pool.query('select 1');
  } catch (error) {
    await pool.end();
    throw new Error(
      `These tests need MariaDB or MySQL at ${DATABASE_URL} (.ci/run starts it): ${(error as Error).message}`,
    );
  }
  return pool;
}

/** The `mariadb` driver's pool settings for the shared server (the pool `@prisma/adapter-mariadb` runs on). */
export function mariadbPoolConfig(connectionLimit: number) {
  const url = new URL(DATABASE_URL);
  return {
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database: url.pathname.slice(1),
    connectionLimit,
  };
}

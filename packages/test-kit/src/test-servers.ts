/**
 * The shared servers the tests use, one variable each, read the same way by every package's tests, the
 * cross-package tests and the examples' tests:
 *
 * - `TEST_POSTGRES_URL`: PostgreSQL (default `postgres://postgres@127.0.0.1:5432/test`)
 * - `TEST_MYSQL_URL`: MariaDB or MySQL (default `mysql://root@127.0.0.1:3306/test`)
 * - `TEST_REDIS_URL`: Redis, its database index as the path (default `redis://127.0.0.1:6379/0`)
 *
 * Servers a test starts and kills itself (`/redis`, `/postgres`, `/mariadb`) are never these. The older
 * names `DATABASE_URL` and `MYSQL_URL` are still read when the new ones are unset.
 *
 * @example
 * ```ts
 * const { postgresUrl } = testServers();
 * const pool = new pg.Pool({ connectionString: postgresUrl });
 * ```
 */
export interface TestServers {
  postgresUrl: string;
  mysqlUrl: string;
  redisUrl: string;
}

const set = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);

/**
 * The URLs from `env` (the process's environment by default).
 *
 * @example
 * ```ts
 * testServers({ TEST_REDIS_URL: 'redis://127.0.0.1:6379/5' }).redisUrl; // 'redis://127.0.0.1:6379/5'
 * ```
 */
export function testServers(env: Record<string, string | undefined> = process.env): TestServers {
  return {
    postgresUrl: set(env.TEST_POSTGRES_URL) ?? set(env.DATABASE_URL) ?? 'postgres://postgres@127.0.0.1:5432/test',
    mysqlUrl: set(env.TEST_MYSQL_URL) ?? set(env.MYSQL_URL) ?? 'mysql://root@127.0.0.1:3306/test',
    redisUrl: set(env.TEST_REDIS_URL) ?? 'redis://127.0.0.1:6379/0',
  };
}

/**
 * A Redis URL as ioredis and node-redis connection options: host, port, database index, user, password.
 * A URL that is not `redis://` with a numeric database index is refused, naming the variable's form.
 *
 * @example
 * ```ts
 * new Redis({ ...redisTarget(testServers().redisUrl), lazyConnect: true });
 * ```
 */
export function redisTarget(url: string): {
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
} {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`TEST_REDIS_URL must be a URL such as redis://127.0.0.1:6379/0, not ${JSON.stringify(url)}`);
  }
  const path = parsed.pathname.replace(/^\//, '');
  if (parsed.protocol !== 'redis:' || !/^\d*$/.test(path))
    throw new TypeError(`TEST_REDIS_URL must be redis://host:port/<database index>, not ${JSON.stringify(url)}`);
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    db: path === '' ? 0 : Number(path),
    ...(parsed.username === '' ? {} : { username: decodeURIComponent(parsed.username) }),
    ...(parsed.password === '' ? {} : { password: decodeURIComponent(parsed.password) }),
  };
}

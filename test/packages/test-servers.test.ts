import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { redisTarget, testServers } from '@service-pay/test-kit';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the shared servers: one set of variables', () => {
  it('defaults to the machine servers, database test and Redis database 0', () => {
    expect(testServers({})).toEqual({
      postgresUrl: 'postgres://postgres@127.0.0.1:5432/test',
      mysqlUrl: 'mysql://root@127.0.0.1:3306/test',
      redisUrl: 'redis://127.0.0.1:6379/0',
    });
  });

  it('takes TEST_POSTGRES_URL, TEST_MYSQL_URL and TEST_REDIS_URL over the defaults and the older names', () => {
    const servers = testServers({
      TEST_POSTGRES_URL: 'postgres://me@127.0.0.1:5432/wt_me',
      TEST_MYSQL_URL: 'mysql://root@127.0.0.1:3306/wt_me',
      TEST_REDIS_URL: 'redis://127.0.0.1:6379/7',
      DATABASE_URL: 'postgres://other@127.0.0.1/other',
      MYSQL_URL: 'mysql://other@127.0.0.1/other',
    });
    expect(servers).toEqual({
      postgresUrl: 'postgres://me@127.0.0.1:5432/wt_me',
      mysqlUrl: 'mysql://root@127.0.0.1:3306/wt_me',
      redisUrl: 'redis://127.0.0.1:6379/7',
    });
  });

  it('reads the older DATABASE_URL and MYSQL_URL when the new names are unset or empty', () => {
    expect(
      testServers({ TEST_POSTGRES_URL: '', DATABASE_URL: 'postgres://a@h/b', MYSQL_URL: 'mysql://a@h/b' }),
    ).toMatchObject({ postgresUrl: 'postgres://a@h/b', mysqlUrl: 'mysql://a@h/b' });
  });

  it('turns a Redis URL into connection options with its database index, and refuses other forms', () => {
    expect(redisTarget('redis://127.0.0.1:6380/5')).toEqual({ host: '127.0.0.1', port: 6380, db: 5 });
    expect(redisTarget('redis://u:p%40ss@localhost')).toEqual({
      host: 'localhost',
      port: 6379,
      db: 0,
      username: 'u',
      password: 'p@ss',
    });
    expect(() => redisTarget('127.0.0.1:6379')).toThrow(/TEST_REDIS_URL/);
    expect(() => redisTarget('redis://127.0.0.1:6379/cache')).toThrow(/database index/);
    expect(() => redisTarget('http://127.0.0.1:6379/0')).toThrow(/redis:\/\//);
  });

  it("no test names the shared servers' addresses itself: every one reads testServers()", () => {
    const offenders: string[] = [];
    const shared =
      /127\.0\.0\.1:(5432|3306)\/test|(redisOn|redis5On)\(6379|port: 6379|['"]redis:\/\/127\.0\.0\.1:6379['"]/;
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir)) {
        if (entry === 'node_modules' || entry === 'dist' || entry === '.next') continue;
        const path = join(dir, entry);
        if (statSync(path).isDirectory()) walk(path);
        else if (/\.(ts|mts|mjs|js)$/.test(entry) && shared.test(readFileSync(path, 'utf8')))
          offenders.push(relative(root, path));
      }
    };
    walk(join(root, 'test'));
    for (const group of ['packages', 'examples'])
      for (const entry of readdirSync(join(root, group)))
        for (const folder of ['test', 'src'].map((name) => join(root, group, entry, name)))
          if (existsSync(folder) && statSync(folder).isDirectory() && (folder.endsWith('test') || entry === 'test-kit'))
            walk(folder);
    // The defaults themselves, and the examples' tests (which read the same variables without the kit).
    const allowed = [
      'packages/test-kit/src/test-servers.ts',
      'examples/express-orders/test/reconcile.test.ts',
      'examples/drizzle-orders/test/drizzle-orders.test.ts',
      'test/packages/test-servers.test.ts',
      'test/faults/fixtures/fault-app.ts',
    ];
    expect(offenders.filter((path) => !allowed.includes(path))).toEqual([]);
  });
});

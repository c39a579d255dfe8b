import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';

// The notice is once per process: each case loads the store's module afresh.
async function freshStore() {
  vi.resetModules();
  const { RedisDedupeStore } = await import('../src/index.js');
  return RedisDedupeStore;
}
const client = () => new Redis({ lazyConnect: true });

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('RedisDedupeStore says at construction, in development, that it is a lease store', () => {
  it('once per process, naming the idempotent credit and the transactional stores', async () => {
    vi.stubEnv('NODE_ENV', 'development');
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const RedisDedupeStore = await freshStore();
    new RedisDedupeStore({ client: client() });
    new RedisDedupeStore({ client: client(), keyPrefix: 'other:' });
    expect(info).toHaveBeenCalledTimes(1);
    const line = String(info.mock.calls[0]?.[0]);
    expect(line).toContain('RedisDedupeStore is a lease store');
    expect(line).toContain('idempotent');
    expect(line).toContain('PostgresStore');
  });

  it('with NODE_ENV unset too', async () => {
    vi.stubEnv('NODE_ENV', undefined);
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const RedisDedupeStore = await freshStore();
    new RedisDedupeStore({ client: client() });
    expect(info).toHaveBeenCalledTimes(1);
  });

  it('never under NODE_ENV=production', async () => {
    vi.stubEnv('NODE_ENV', 'production');
    const info = vi.spyOn(console, 'info').mockImplementation(() => {});
    const RedisDedupeStore = await freshStore();
    new RedisDedupeStore({ client: client() });
    expect(info).not.toHaveBeenCalled();
  });
});

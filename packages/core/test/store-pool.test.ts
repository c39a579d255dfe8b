import { describe, expect, it } from 'vitest';
import { StoreTimeoutError } from '../src/index.js';
import { explainStoreTimeout, StorePoolFullError } from '../src/pipeline/store-pool.js';

// The branches no real store reaches (the real pools are in @service-pay/postgres's pool-full.test.ts).
describe('explainStoreTimeout', () => {
  const timeout = new StoreTimeoutError('The store did not answer begin within 2000 ms.');

  it('names a full pool only when callers wait for a connection', () => {
    const full = explainStoreTimeout(timeout, { describePool: () => ({ size: 4, inUse: 4, waiting: 2 }) });
    expect(full).toBeInstanceOf(StorePoolFullError);
    expect((full as StorePoolFullError).code).toBe('STORE_POOL_FULL');
    expect((full as Error).message).toBe(
      "The store's connection pool is full: the store did not answer begin within 2000 ms, waiting for a connection (pool size 4, 4 in use, 2 waiting).",
    );
    // Every connection in use but nobody waiting: this call had its connection, the database was slow.
    expect(explainStoreTimeout(timeout, { describePool: () => ({ size: 4, inUse: 4, waiting: 0 }) })).toBe(timeout);
  });

  it('leaves the timeout as it is when the store cannot tell, or fails to', () => {
    expect(explainStoreTimeout(timeout, {})).toBe(timeout);
    expect(explainStoreTimeout(timeout, { describePool: () => undefined })).toBe(timeout);
    const throwing = {
      describePool: () => {
        throw new Error('no counters');
      },
    };
    expect(explainStoreTimeout(timeout, throwing)).toBe(timeout);
    const refused = new Error('ECONNREFUSED');
    expect(explainStoreTimeout(refused, { describePool: () => ({ size: 1, inUse: 1, waiting: 1 }) })).toBe(refused);
  });
});

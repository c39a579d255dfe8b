import { describe, expect, it } from 'vitest';
import { holdTransaction } from '../src/index.js';

/** A callback-style transaction as ORMs run one: begin, the callback, then commit or roll back by its result. */
function fakeClient() {
  const log: string[] = [];
  const transaction = async <T>(work: (tx: { write(v: string): void }) => Promise<T>): Promise<T> => {
    log.push('BEGIN');
    const writes: string[] = [];
    try {
      const result = await work({ write: (v) => writes.push(v) });
      log.push(...writes, 'COMMIT');
      return result;
    } catch (error) {
      log.push('ROLLBACK');
      throw error;
    }
  };
  return { log, transaction };
}

describe('holdTransaction', () => {
  it('keeps the callback open until commit, then the client commits', async () => {
    const client = fakeClient();
    const held = await holdTransaction<{ write(v: string): void }>((work) => client.transaction(work));
    held.tx.write('credit');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(client.log).toEqual(['BEGIN']);
    await held.commit();
    expect(client.log).toEqual(['BEGIN', 'credit', 'COMMIT']);
  });

  it('rolls back on request and resolves without the internal error', async () => {
    const client = fakeClient();
    const held = await holdTransaction<{ write(v: string): void }>((work) => client.transaction(work));
    held.tx.write('credit');
    await expect(held.rollback()).resolves.toBeUndefined();
    expect(client.log).toEqual(['BEGIN', 'ROLLBACK']);
  });

  it('rejects when the transaction cannot start', async () => {
    const refused = new Error('connection refused');
    await expect(holdTransaction(() => Promise.reject(refused))).rejects.toBe(refused);
    await expect(
      holdTransaction(() => {
        throw refused;
      }),
    ).rejects.toBe(refused);
  });

  it('rejects when the client resolves without calling the callback', async () => {
    await expect(holdTransaction(() => Promise.resolve())).rejects.toThrow(/without calling its callback/);
  });

  it('commit rejects with the client error when the client ended the transaction itself', async () => {
    const timedOut = new Error('Transaction already closed: timeout');
    const held = await holdTransaction<string>(
      (work) =>
        new Promise((_resolve, reject) => {
          void work('tx');
          setTimeout(() => reject(timedOut), 1);
        }),
    );
    await new Promise((resolve) => setTimeout(resolve, 5));
    await expect(held.commit()).rejects.toBe(timedOut);
    expect(await held.rollback()).toBe(timedOut);
  });

  it('refuses a second run of the callback (a client retrying the transaction)', async () => {
    let second: Promise<void> | undefined;
    const held = await holdTransaction<string>(async (work) => {
      const first = work('first');
      second = work('second');
      await first;
    });
    expect(held.tx).toBe('first');
    await expect(second).rejects.toThrow(/ran twice/);
    await held.commit();
  });
});

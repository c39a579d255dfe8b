import { describe, expect, it } from 'vitest';
import { STATUS_BY_CODE } from '../src/index.js';
import {
  clientGuard,
  OwnTransactionError,
  openDelivery,
  refuseOwnTransactions,
  WriteOutsideTransactionError,
} from '../src/node/index.js';

/** A client whose `transaction()` runs its callback and answers a builder, as Kysely's does. */
function appClient() {
  const calls: string[] = [];
  return {
    calls,
    transaction() {
      calls.push('transaction');
      return { execute: async (work: () => Promise<string>) => work() };
    },
  };
}

describe('the delivery guard: refusals carried through the delivery, never thrown into the handler', () => {
  it('answers a refused call with a rejected promise (chained builder calls too) and records it', async () => {
    const client = appClient();
    const scope = {};
    const own = refuseOwnTransactions(client, ['transaction'], scope, 'TestStore');
    const delivery = openDelivery(scope);
    let chained: unknown;
    await delivery.run(async () => {
      // No synchronous throw: the builder call chained onto the refusal answers the same rejection.
      chained = client.transaction().execute(async () => 'credited');
    });
    await expect(chained).rejects.toBeInstanceOf(OwnTransactionError);
    await expect(chained).rejects.toMatchObject({ code: 'OWN_TRANSACTION_IN_HANDLER' });
    expect(client.calls).toEqual([]);
    const refused = delivery.end();
    expect(refused).toBeInstanceOf(OwnTransactionError);
    // The store's own use, and the app's outside any delivery, go through.
    await expect(own.transaction().execute(async () => 'store')).resolves.toBe('store');
    await expect(client.transaction().execute(async () => 'app')).resolves.toBe('app');
  });

  it('holds its end for app work a guard has yet to judge, and a refusal found there still counts', async () => {
    const delivery = openDelivery({});
    expect(delivery.settled()).toBeUndefined(); // nothing held: nothing to wait for
    let judge: () => void = () => {};
    delivery.hold(new Promise<void>((resolve) => (judge = resolve)));
    delivery.hold(Promise.reject(new Error('a checkout that failed settles too')));
    let settled = false;
    const waiting = delivery.settled()?.then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    void delivery.refuse(new WriteOutsideTransactionError('TestStore', 'a held connection'));
    judge();
    await waiting;
    expect(settled).toBe(true);
    expect(delivery.end()).toBeInstanceOf(WriteOutsideTransactionError);
    // Once ended, nothing more is held.
    delivery.hold(new Promise<void>(() => {}));
    expect(delivery.settled()).toBeUndefined();
  });

  it('records a refusal nobody awaited, without an unhandled rejection', async () => {
    const client = appClient();
    const scope = {};
    refuseOwnTransactions(client, ['transaction'], scope, 'TestStore');
    const delivery = openDelivery(scope);
    const unhandled: unknown[] = [];
    const listen = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', listen);
    try {
      await delivery.run(async () => {
        void client.transaction();
      });
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', listen);
    }
    expect(unhandled).toEqual([]);
    expect(delivery.end()).toBeInstanceOf(OwnTransactionError);
  });

  it('lives exactly as long as the delivery: work the handler left behind runs freely once it ended', async () => {
    const client = appClient();
    const scope = {};
    refuseOwnTransactions(client, ['transaction'], scope, 'TestStore');
    const delivery = openDelivery(scope);
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let later: Promise<string> = Promise.resolve('');
    await delivery.run(async () => {
      later = gate.then(() => client.transaction().execute(async () => 'background'));
    });
    expect(delivery.end()).toBeUndefined();
    open();
    await expect(later).resolves.toBe('background');
  });

  it('knows only the stores given the client, and nothing inside scope.outside', async () => {
    const pool = {};
    const scope = {};
    const guard = clientGuard(pool, scope, 'TestStore');
    const other = openDelivery({});
    await other.run(async () => {
      expect(guard.running()).toBeUndefined();
    });
    const delivery = openDelivery(scope);
    await delivery.run(async () => {
      expect(guard.running()?.store).toBe('TestStore');
      expect(delivery.outside(() => guard.running())).toBeUndefined();
      // A lazy thenable is started inside, not from the awaiting code.
      const seen = await delivery.outside(() => ({
        // biome-ignore lint/suspicious/noThenProperty: a lazy query is a thenable
        then: (resolve: (value: unknown) => void) => resolve(guard.running()),
      }));
      expect(seen).toBeUndefined();
    });
    delivery.end();
    await delivery.run(async () => {
      expect(guard.running()).toBeUndefined();
    });
  });

  it('names ctx.tx and the store; the codes answer 500', () => {
    const error = new WriteOutsideTransactionError('KyselyStore', 'pool.query: insert into credits …');
    expect(error.code).toBe('WRITE_OUTSIDE_TRANSACTION');
    expect(error.message).toMatch(/^KyselyStore: .*ctx\.tx/);
    expect(STATUS_BY_CODE.WRITE_OUTSIDE_TRANSACTION).toBe(500);
    expect(STATUS_BY_CODE.QUERY_NOT_AWAITED).toBe(500);
  });
});

import { describe, expect, it } from 'vitest';
import { STATUS_BY_CODE } from '../src/index.js';
import { LateTxUseError, openDelivery } from '../src/node/index.js';

describe('the delivery scope: late use', () => {
  it('is reported once per delivery, naming the store, the call and the payment', async () => {
    const scope = openDelivery({}, 'p_late');
    const heard: LateTxUseError[] = [];
    scope.onLateUse((error) => heard.push(error));
    await scope.run(async () => {});
    scope.end();
    scope.lateUse('TestStore', 'ctx.tx.query(…)');
    scope.lateUse('TestStore', 'ctx.tx.query(…)');
    expect(heard).toHaveLength(1);
    expect(heard[0]).toBeInstanceOf(LateTxUseError);
    expect(heard[0]?.code).toBe('LATE_TX_USE');
    expect(heard[0]?.paymentId).toBe('p_late');
    expect(heard[0]?.message).toMatch(/^TestStore: .*ctx\.tx\.query\(…\) for payment p_late was NOT made/);
    expect(STATUS_BY_CODE.LATE_TX_USE).toBe(500);
  });

  it('parks work the handler left behind: a value that never settles and takes chained calls, no unhandled rejection', async () => {
    const scope = openDelivery({}, 'p_1');
    await scope.run(async () => {});
    scope.end();
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', note);
    let settled = false;
    try {
      const parked = scope.lateUse('TestStore', 'ctx.tx(…)') as {
        insert(row: object): PromiseLike<unknown>;
      };
      expect(parked).toBeDefined();
      void (async () => {
        await parked.insert({ a: 1 });
        settled = true;
      })();
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', note);
    }
    expect(settled).toBe(false);
    expect(unhandled).toEqual([]);
  });

  it('answers undefined (refuse as an ended transaction) while the handler still runs past its deadline, or never ran', async () => {
    const never = openDelivery({});
    never.end();
    expect(never.lateUse('TestStore', 'ctx.tx.query(…)')).toBeUndefined();

    const scope = openDelivery({}, 'p_2');
    let finish: () => void = () => {};
    const later = new Promise<void>((resolve) => (finish = resolve));
    await scope.run(async () => {});
    scope.runsUntil(later);
    scope.end();
    expect(scope.lateUse('TestStore', 'ctx.tx.query(…)')).toBeUndefined();
    finish();
    await later;
    await Promise.resolve();
    expect(scope.lateUse('TestStore', 'ctx.tx.query(…)')).toBeDefined();
  });

  it('records no refusal once ended: nothing is refused in the name of a delivery that is over', () => {
    const scope = openDelivery({});
    expect(scope.end()).toBeUndefined();
    void scope.refuse(new Error('after the end'));
    expect(scope.refusal).toBeUndefined();
  });
});

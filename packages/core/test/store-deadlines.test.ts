import { describe, expect, it } from 'vitest';
import { createWebhookHandler, type DedupeStore, MemoryDedupeStore, signWebhook } from '../src/index.js';
import { StoreDeadlines, StoreTimeoutError } from '../src/pipeline/store-call.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';

const never = () => new Promise<never>(() => {});
const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));

describe('StoreDeadlines (one timer for every store call in flight)', () => {
  it('answers what the store answered, and gives up only the calls that did not answer, oldest first', async () => {
    const deadlines = new StoreDeadlines(40, Date.now);
    const given: string[] = [];
    const watch = (p: Promise<unknown>, name: string) =>
      p.then(
        (value) => value,
        (error: unknown) => {
          given.push(name);
          throw error;
        },
      );
    const [first, answered, refused, second] = await Promise.allSettled([
      watch(deadlines.bound(never(), 'claim'), 'first'),
      deadlines.bound(after(5, 'B'), 'complete'),
      deadlines.bound(Promise.reject(new Error('ECONNREFUSED')), 'claim'),
      watch(deadlines.bound(never(), 'release'), 'second'),
    ]);
    expect(answered).toEqual({ status: 'fulfilled', value: 'B' });
    expect(refused).toMatchObject({ status: 'rejected', reason: { message: 'ECONNREFUSED' } });
    expect(first).toMatchObject({ status: 'rejected', reason: expect.any(StoreTimeoutError) });
    expect((first as PromiseRejectedResult).reason.message).toBe('The store did not answer claim within 40 ms.');
    expect(second).toMatchObject({ status: 'rejected', reason: expect.any(StoreTimeoutError) });
    expect(given).toEqual(['first', 'second']);
  });

  it('gives a call made after the timer was set its own full deadline, not the older call it replaced', async () => {
    const deadlines = new StoreDeadlines(60, Date.now);
    const old = deadlines.bound(after(1, 'old'), 'claim'); // sets the timer, then leaves the list at once
    await expect(old).resolves.toBe('old');
    await after(30, undefined);
    // The timer still fires at the first call's deadline; this call has 30 ms more and answers within them.
    await expect(deadlines.bound(after(45, 'late'), 'complete')).resolves.toBe('late');
  });

  it('keeps working after every call was given up: a new call sets the timer again', async () => {
    const deadlines = new StoreDeadlines(10, Date.now);
    await expect(deadlines.bound(never(), 'claim')).rejects.toBeInstanceOf(StoreTimeoutError);
    await expect(deadlines.bound(never(), 'extend')).rejects.toThrow('extend within 10 ms');
    await expect(deadlines.bound(after(1, 'ok'), 'claim')).resolves.toBe('ok');
  });

  it('an idle handler keeps no timer alive: after a delivery, nothing pending holds the process', async () => {
    // A store that does not answer in-process, so every call is bounded by the timer.
    const memory = new MemoryDedupeStore({ logger: { warn: () => {}, error: () => {} } });
    const store: DedupeStore = {
      claim: (...args) => memory.claim(...args),
      complete: (...args) => memory.complete(...args),
      release: (...args) => memory.release(...args),
      extend: (...args) => memory.extend(...args),
    };
    const secret = 'whsec_idle_timer_test';
    let credited = 0;
    const handle = createWebhookHandler({
      secret,
      store,
      storeTimeoutMs: 60_000,
      onPaymentPaid: () => void credited++,
    });
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret });
    const pending = handle({ method: 'POST', headers, rawBody: body });
    expect(timers()).toBe(before + 1); // the claim is in flight: its deadline keeps the process alive
    expect((await pending).status).toBe(200);
    expect(credited).toBe(1);
    expect(timers()).toBe(before);
    // The next delivery is bounded again.
    const again = signWebhook({ event: samplePaymentPaidEvent({ paymentId: 'p_idle_2' }), secret });
    const second = handle({ method: 'POST', headers: again.headers, rawBody: again.body });
    expect(timers()).toBe(before + 1);
    expect((await second).status).toBe(200);
    expect(timers()).toBe(before);
  });
});

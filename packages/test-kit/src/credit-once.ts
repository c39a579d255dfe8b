import { expect } from 'vitest';

/** What the check reads of a handler's answer. */
export interface Answer {
  status: number;
  body: string;
}

/**
 * A credit step that throws after its first write: the first attempt must roll its credit back. `calls()`
 * says how many attempts reached it.
 *
 * @example
 * ```ts
 * const failing = failsFirstAttempt('fails after writing its credit');
 * onPaymentPaid: async (paid, ctx) => { await credit(ctx.tx, paid); failing.afterCredit(); }
 * ```
 */
export function failsFirstAttempt(message: string): { afterCredit(): void; calls(): number } {
  let calls = 0;
  return {
    afterCredit: () => {
      calls += 1;
      if (calls === 1) throw new Error(message);
    },
    calls: () => calls,
  };
}

/**
 * The exactly-once check of a handler whose first attempt throws after writing its credit (see
 * `failsFirstAttempt`): attempt 1 answers 500 and leaves no credit, attempt 2 credits, attempt 3 is a
 * duplicate, and one credit row is left in all. `deliver(n)` sends the payment's n-th delivery;
 * `credits()` counts its credit rows in a table without a unique constraint.
 *
 * @example
 * ```ts
 * await expectFailedAttemptThenOneCredit((n) => handle(delivery(event, n)), () => creditsOf(event.paymentId));
 * ```
 */
export async function expectFailedAttemptThenOneCredit(
  deliver: (attempt: number) => Promise<Answer>,
  credits: () => Promise<number>,
): Promise<void> {
  expect((await deliver(1)).status).toBe(500);
  expect(await credits()).toBe(0);
  expect((await deliver(2)).status).toBe(200);
  const third = await deliver(3);
  expect(third.status).toBe(200);
  expect(third.body).toContain('duplicate');
  expect(await credits()).toBe(1);
}

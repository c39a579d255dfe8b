import type { DeliveryRecord } from '../core/delivery-log.js';
import { result } from './format.js';
import type { Io } from './io.js';
import { type Advice, adviceFor } from './receiver-advice.js';

const FINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** What `followDeliveries` saw. */
export interface Followed {
  deliveries: DeliveryRecord[];
  /** The set-up problem it stopped at (a retry would meet the same answer), or null. */
  stoppedBy: Advice | null;
  /** Every distinct fix it printed, in order. */
  fixes: string[];
  /** Every delivery ended in time (succeeded, failed or cancelled). */
  settled: boolean;
}

/**
 * Polls a payment's deliveries (`read`, keeping those of `deliveryIds`), prints each attempt as it is
 * answered and, for every failed one, a `fix:` line (each distinct fix once). Stops at the first failure
 * the app's set-up causes (a wrong secret, a wrong path, a body parser in front of the route, nothing
 * listening): a retry gets the same answer until someone changes the app, so waiting out the sender's
 * schedule (about 2 minutes) teaches nothing. Else until every delivery is final, or `waitMs` is over.
 *
 * @example
 * ```ts
 * const followed = await followDeliveries(() => sim.deliveries({ paymentId }), { deliveryIds, waitMs: 60_000, target, io, json: false });
 * ```
 */
export async function followDeliveries(
  read: () => Promise<DeliveryRecord[]>,
  options: { deliveryIds: readonly string[]; waitMs: number; target: string; io: Io; json: boolean },
): Promise<Followed> {
  const { io, json, target } = options;
  const wanted = new Set(options.deliveryIds);
  const printed = new Map<string, number>();
  const fixes: string[] = [];
  let stoppedBy: Advice | null = null;
  const deadline = Date.now() + options.waitMs;
  for (;;) {
    const deliveries = (await read()).filter((d) => wanted.has(d.deliveryId));
    for (const d of deliveries) {
      for (const a of d.attempts.slice(printed.get(d.deliveryId) ?? 0)) {
        const next = a.nextRetryInMs === null ? ` -> ${d.state}` : `; retry in ${a.nextRetryInMs} ms`;
        if (!json) io.out(`${d.deliveryId} ${d.kind} attempt ${a.attempt}: ${result(a)} (${a.latencyMs} ms)${next}`);
        const advice = adviceFor(a, target);
        if (advice === null) continue;
        if (!fixes.includes(advice.fix)) {
          fixes.push(advice.fix);
          if (!json) io.err(`fix: ${advice.fix}`);
        }
        if (advice.setup) stoppedBy ??= advice;
      }
      printed.set(d.deliveryId, d.attempts.length);
    }
    const settled = deliveries.length >= wanted.size && deliveries.every((d) => FINAL.has(d.state));
    if (stoppedBy !== null || settled || Date.now() >= deadline) return { deliveries, stoppedBy, fixes, settled };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

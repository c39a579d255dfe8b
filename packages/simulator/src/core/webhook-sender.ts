import { Agent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { signWebhook } from '@service-pay/core';
import type { AttemptOutcome, DeliveryAttempt, DeliveryKind, DeliveryRecord, DeliveryState } from './delivery-log.js';
import { newDeliveryId } from './ids.js';
import type { ResolvedRetry } from './options.js';
import { type PostHandle, postWebhook } from './post-webhook.js';
import { seededRandom } from './random.js';

/** One delivery to start: who, where, what, and its own faults. */
export interface DeliveryPlan {
  paymentId: string;
  orderNo: string;
  merchant: string;
  webhookSecret: string;
  url: string;
  kind: DeliveryKind;
  body: string;
  /** Answers of the first N attempts are thrown away. */
  dropFirst: number;
  clockSkewSec: number;
  /** Pause before the first attempt. */
  delayMs: number;
  /** Every attempt fails without a request (the endpoint is "down"). */
  endpointDown: boolean;
}

interface Delivery {
  record: DeliveryRecord;
  plan: DeliveryPlan;
  /** The delivery that starts when this one settles (sequential duplicates). */
  next: Delivery | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
  abort: (() => void) | undefined;
  /**
   * Its own generator, seeded from the simulator seed and the delivery's sequence number: attempts of
   * many deliveries finish in an order that depends on timing, and one shared generator would make
   * a seeded run unrepeatable.
   */
  random: () => number;
}

export interface SenderContext {
  retry: ResolvedRetry;
  now: () => number;
  /** The simulator-wide chance that an answer is dropped, read at each attempt. */
  dropRate: () => number;
  /** Seed of the per-delivery generators. */
  seed: number;
  /** Deliveries kept; past it the oldest finished ones are dropped. */
  retain: number;
  onAttempt: (delivery: DeliveryRecord, attempt: DeliveryAttempt) => void;
  /** The delivery was created or changed state (live record: copy it to keep it). */
  onChange: (delivery: DeliveryRecord) => void;
  onSettled: () => void;
}

const FINAL: ReadonlySet<DeliveryState> = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * Sends `payment.paid` deliveries with the spec's retry rules: each attempt re-signed with the current
 * (possibly skewed) time over the same body bytes, a 2xx within the timeout ends the delivery, anything
 * else schedules the next attempt after an exponentially growing pause, up to `maxAttempts`.
 *
 * Deliveries are independent: each has its own timer and request, so thousands can be in flight at
 * once. Every timer and socket is owned here, so `stop()` leaves nothing behind.
 */
export class WebhookSender {
  private readonly byId = new Map<string, Delivery>();
  private ordered: Delivery[] = [];
  private created = 0;
  /** Finished deliveries dropped to stay within `retain`. */
  dropped = 0;
  private active = 0;
  private stopped = false;
  // Keep-alive: a retry storm against one receiver reuses a few sockets instead of opening thousands.
  // The cap keeps a big chaos run under the usual 1024 open files.
  private readonly agents = {
    http: new Agent({ keepAlive: true, maxSockets: 128 }),
    https: new HttpsAgent({ keepAlive: true, maxSockets: 128 }),
  };

  constructor(private readonly ctx: SenderContext) {}

  /** Number of deliveries not yet final. */
  get pending(): number {
    return this.active;
  }

  /**
   * Starts a group of deliveries of one event: `immediate` ones now, `sequential` ones each after the
   * previous one of the chain (starting with the first immediate one) has settled.
   */
  enqueue(immediate: DeliveryPlan[], sequential: DeliveryPlan[]): string[] {
    const made = [...immediate, ...sequential].map((plan) => this.create(plan));
    const heads = made.slice(0, immediate.length);
    let tail = heads[0];
    for (const d of made.slice(immediate.length)) {
      if (tail === undefined) heads.push(d);
      else tail.next = d;
      tail = d;
    }
    for (const d of made) this.ctx.onChange(d.record);
    for (const d of heads) this.start(d);
    return made.map((d) => d.record.deliveryId);
  }

  list(filter: { paymentId?: string | undefined; state?: DeliveryState | undefined } = {}): DeliveryRecord[] {
    const out: DeliveryRecord[] = [];
    for (const d of this.ordered) {
      if (filter.paymentId !== undefined && d.record.paymentId !== filter.paymentId) continue;
      if (filter.state !== undefined && d.record.state !== filter.state) continue;
      out.push(snapshot(d.record));
    }
    return out;
  }

  get(deliveryId: string): DeliveryRecord | undefined {
    const d = this.byId.get(deliveryId);
    return d === undefined ? undefined : snapshot(d.record);
  }

  stop(): void {
    this.stopped = true;
    for (const d of this.ordered) {
      if (FINAL.has(d.record.state)) continue;
      clearTimeout(d.timer);
      d.abort?.();
      d.record.state = 'cancelled';
    }
    this.active = 0;
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private create(plan: DeliveryPlan): Delivery {
    const record: DeliveryRecord = {
      deliveryId: newDeliveryId(),
      paymentId: plan.paymentId,
      orderNo: plan.orderNo,
      merchant: plan.merchant,
      url: plan.url,
      kind: plan.kind,
      state: 'scheduled',
      body: plan.body,
      createdAt: new Date(this.ctx.now()).toISOString(),
      attempts: [],
    };
    this.created += 1;
    const random = seededRandom((this.ctx.seed ^ Math.imul(this.created, 0x9e3779b1)) >>> 0);
    const d: Delivery = { record, plan, next: undefined, timer: undefined, abort: undefined, random };
    this.byId.set(record.deliveryId, d);
    this.ordered.push(d);
    if (this.ordered.length > this.ctx.retain) this.trim();
    this.active += 1;
    return d;
  }

  /**
   * Drops the oldest finished deliveries down to 90% of `retain` (in one pass, so a long run pays for a
   * trim once per tenth of the log, not per delivery). Deliveries still in progress are always kept.
   */
  private trim(): void {
    let excess = this.ordered.length - Math.floor(this.ctx.retain * 0.9);
    this.ordered = this.ordered.filter((d) => {
      if (excess <= 0 || !FINAL.has(d.record.state)) return true;
      this.byId.delete(d.record.deliveryId);
      excess -= 1;
      this.dropped += 1;
      return false;
    });
  }

  /** The first attempt, after the delivery's injected delay if it has one. */
  private start(d: Delivery): void {
    if (d.plan.delayMs === 0) this.attempt(d);
    else {
      d.timer = setTimeout(() => {
        d.timer = undefined;
        this.attempt(d);
      }, d.plan.delayMs);
    }
  }

  private attempt(d: Delivery): void {
    if (this.stopped) return;
    const { retry } = this.ctx;
    const n = d.record.attempts.length + 1;
    const signatureTimestamp = Math.max(0, Math.floor(this.ctx.now() / 1000) + d.plan.clockSkewSec);
    const { headers } = signWebhook({
      event: d.plan.body,
      secret: d.plan.webhookSecret,
      timestamp: signatureTimestamp,
      deliveryId: d.record.deliveryId,
    });
    d.record.state = 'in-flight';
    this.ctx.onChange(d.record);
    const handle = d.plan.endpointDown
      ? endpointDown()
      : postWebhook(new URL(d.record.url), d.plan.body, headers, retry.timeoutMs, this.agents);
    d.abort = handle.abort;
    void handle.result.then((r) => {
      d.abort = undefined;
      if (this.stopped) return;
      const rate = this.ctx.dropRate();
      const dropped = r.error === null && (n <= d.plan.dropFirst || (rate > 0 && d.random() < rate));
      let outcome: AttemptOutcome;
      let error: string | null = null;
      if (r.error?.kind === 'down') {
        outcome = 'endpoint-down';
        error = r.error.message;
      } else if (dropped) {
        outcome = 'dropped';
        error = `answer ${r.status} dropped by fault injection; counted as a timeout`;
      } else if (r.error?.kind === 'timeout') {
        outcome = 'timeout';
        error = `timeout: ${r.error.message}`;
      } else if (r.error !== null) {
        outcome = 'network-error';
        error = `network error: ${r.error.message}`;
      } else if ((r.status as number) >= 200 && (r.status as number) < 300) {
        outcome = 'succeeded';
      } else {
        outcome = 'http-error';
        error = `HTTP ${r.status}`;
      }
      const last = outcome === 'succeeded' || n >= retry.maxAttempts;
      const delay = last ? null : Math.round(retry.baseDelayMs * retry.factor ** (n - 1));
      const attempt: DeliveryAttempt = {
        attempt: n,
        startedAt: new Date(r.startedAt).toISOString(),
        latencyMs: r.latencyMs,
        status: dropped ? null : r.status,
        error,
        outcome,
        responseBody: r.responseBody,
        signatureTimestamp,
        nextRetryInMs: delay,
      };
      d.record.attempts.push(attempt);
      d.record.state = delay !== null ? 'waiting-retry' : outcome === 'succeeded' ? 'succeeded' : 'failed';
      this.report(d.record, attempt);
      this.ctx.onChange(d.record);
      if (delay === null) {
        this.settle(d);
      } else {
        d.timer = setTimeout(() => {
          d.timer = undefined;
          this.attempt(d);
        }, delay);
      }
    });
  }

  private settle(d: Delivery): void {
    this.active -= 1;
    // Over the bound because deliveries were in progress at the last trim: now one has finished.
    if (this.ordered.length > this.ctx.retain) this.trim();
    if (d.next !== undefined) this.start(d.next);
    else if (this.active === 0) this.ctx.onSettled();
  }

  private report(record: DeliveryRecord, attempt: DeliveryAttempt): void {
    try {
      this.ctx.onAttempt(snapshot(record), { ...attempt });
    } catch {
      // A logging callback must not break deliveries.
    }
  }
}

/** An attempt that fails at once without a request: the merchant's endpoint is "down" (fault injection). */
function endpointDown(): PostHandle {
  const startedAt = Date.now();
  return {
    result: Promise.resolve({
      status: null,
      responseBody: '',
      error: { kind: 'down', message: 'endpoint down (fault injection: failAllAttempts); nothing was sent' },
      startedAt,
      latencyMs: 0,
    }),
    abort: () => undefined,
  };
}

/** A copy that shares nothing with the live record. */
export function snapshot(record: DeliveryRecord): DeliveryRecord {
  return { ...record, attempts: record.attempts.map((a) => ({ ...a })) };
}

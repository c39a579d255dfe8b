import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toRawAmount } from '@service-pay/core';
import { handleControlApi } from './control-api.js';
import type { DeliveryAttemptEvent, DeliveryRecord, DeliveryState } from './delivery-log.js';
import { SimulatorError } from './errors.js';
import { sendError } from './http-io.js';
import { newTxId } from './ids.js';
import { handleMerchantApi } from './merchant-api.js';
import {
  type FaultOptions,
  type ResolvedFaults,
  type ResolvedMerchant,
  type ResolvedOptions,
  type ResolvedRetry,
  resolveFaults,
  resolveOptions,
  type SimulatorOptions,
} from './options.js';
import {
  type DeliveryFaultOptions,
  type PayOptions,
  type ResolvedDeliveryFaults,
  resolveDeliveryFaults,
  resolvePayOptions,
} from './pay-options.js';
import { type PaymentRecord, PaymentStore, type SimulatedPayment } from './payment-store.js';
import { seededRandom } from './random.js';
import { type DeliveryPlan, WebhookSender } from './webhook-sender.js';

/**
 * What `pay` resolves with once the payment is PAID: the payment and the `dl_` ids of the deliveries
 * started for it (the first one, then any duplicates). Delivery happens in the background; use
 * `waitForIdle()` or `deliveries({ paymentId })` to follow it.
 *
 * @example
 * ```ts
 * const { payment, deliveryIds }: PayResult = await sim.pay(paymentId);
 * ```
 */
export interface PayResult {
  payment: SimulatedPayment;
  deliveryIds: string[];
}

/**
 * A merchant as the simulator runs it, defaults filled in.
 *
 * @example
 * ```ts
 * const [merchant]: readonly SimulatorMerchant[] = sim.merchants;
 * const client = createServiceClient({ baseUrl: sim.url, apiKey: merchant.apiKey, apiSecret: merchant.apiSecret });
 * ```
 */
export type SimulatorMerchant = Readonly<ResolvedMerchant>;

/**
 * A running simulator: its address, and the helpers a test, a demo or the control API drive it with.
 *
 * @example
 * ```ts
 * const sim: Simulator = await startSimulator({ merchants: [generateMerchant()] });
 * console.log(sim.url);
 * await sim.stop();
 * ```
 */
export interface Simulator {
  /** Base URL, such as `http://127.0.0.1:53211`; the merchant API is under `/v1`, the control API under `/_simulator`. */
  readonly url: string;
  readonly port: number;
  readonly merchants: readonly SimulatorMerchant[];
  /** Delivery timing in force (defaults filled in: 8 attempts, 1000 ms x 2 backoff, 5000 ms timeout). */
  readonly retry: Readonly<Required<ResolvedRetry>>;
  /** The simulator-wide faults in force. */
  readonly faults: SimulatorFaults;
  /** Seed of the fault generator: pass it back as `seed` to repeat a run. */
  readonly seed: number;
  /**
   * Marks a PENDING payment paid: records the transaction, climbs to the merchant's confirmation threshold
   * (one step per `confirmationIntervalMs`), sets PAID and starts the signed `payment.paid` deliveries.
   * Rejects with `PAYMENT_NOT_FOUND`, `PAYMENT_EXPIRED`, `PAYMENT_ALREADY_PAID` or `INVALID_PAY_OPTIONS`.
   */
  pay(paymentId: string, options?: PayOptions): Promise<PayResult>;
  /** Expires a PENDING payment now (as if `expireSec` had passed). */
  expire(paymentId: string): SimulatedPayment;
  /** Sends the webhook of a PAID payment again, as new deliveries (fresh `dl_` ids, same body). */
  redeliver(paymentId: string, options?: DeliveryFaultOptions): string[];
  payment(paymentId: string): SimulatedPayment | undefined;
  /** Every payment, oldest first. */
  payments(): SimulatedPayment[];
  /** The delivery log, oldest first; snapshots, safe to keep. */
  deliveries(filter?: { paymentId?: string | undefined; state?: DeliveryState | undefined }): DeliveryRecord[];
  delivery(deliveryId: string): DeliveryRecord | undefined;
  /** Changes the simulator-wide faults; fields left out keep their value. Returns the faults in force. */
  setFaults(faults: FaultOptions): SimulatorFaults;
  /** Resolves when no payment is confirming and no delivery is pending; rejects with IDLE_TIMEOUT. */
  waitForIdle(options?: { timeoutMs?: number | undefined }): Promise<void>;
  /** Stops the server, cancels every pending retry and in-flight request, clears every timer. */
  stop(): Promise<void>;
}

/**
 * The simulator-wide faults with defaults filled in.
 *
 * @example
 * ```ts
 * const faults: SimulatorFaults = sim.setFaults({ dropResponseRate: 0.1 });
 * ```
 */
export type SimulatorFaults = Readonly<ResolvedFaults>;

/** Simulated chain height; blocks of consecutive payments follow each other. */
const FIRST_BLOCK = 61_000_000;

/**
 * Starts the local payment service: the merchant API (spec 4, 5.1) and signed `payment.paid` webhooks
 * (spec 5.2, 6) with the spec's retries, plus a control API under `/_simulator` and fault injection.
 * One plain `node:http` server; everything lives in memory until `stop()`.
 *
 * @example
 * ```ts
 * import { createServiceClient } from '@service-pay/client';
 * import { generateMerchant, startSimulator } from '@service-pay/simulator';
 *
 * const merchant = generateMerchant();
 * const sim = await startSimulator({ merchants: [merchant], retry: { baseDelayMs: 100 } });
 * const client = createServiceClient({ baseUrl: sim.url, apiKey: merchant.apiKey, apiSecret: merchant.apiSecret });
 * const { paymentId } = await client.createPayment({
 *   orderNo: 'order-1', tokenSymbol: 'USDT', amount: '5', expireSec: 900, notifyUrl: 'http://127.0.0.1:3000/webhooks/service',
 * });
 * await sim.pay(paymentId, { duplicates: 1 });
 * await sim.waitForIdle();
 * console.log(sim.deliveries({ paymentId }));
 * await sim.stop();
 * ```
 */
export async function startSimulator(options: SimulatorOptions): Promise<Simulator> {
  const engine = new SimulatorEngine(resolveOptions(options));
  await engine.listen();
  return engine.api;
}

interface Sleeper {
  timer: ReturnType<typeof setTimeout>;
  reject: (error: SimulatorError) => void;
}

class SimulatorEngine {
  readonly store: PaymentStore;
  readonly sender: WebhookSender;
  readonly api: Simulator;
  private readonly server: Server;
  private readonly random: () => number;
  private faults: ResolvedFaults;
  private nextBlock = FIRST_BLOCK;
  private confirming = 0;
  private stopped = false;
  private readonly sleepers = new Set<Sleeper>();
  private readonly idleWaiters = new Set<() => void>();
  private url = '';
  private port = 0;

  constructor(private readonly o: ResolvedOptions) {
    this.store = new PaymentStore(o.now);
    this.random = seededRandom(o.seed);
    this.faults = o.faults;
    this.sender = new WebhookSender({
      retry: o.retry,
      now: o.now,
      dropRate: () => this.faults.dropResponseRate,
      seed: o.seed,
      onAttempt: (delivery, attempt) => o.onDeliveryAttempt?.({ delivery, attempt } satisfies DeliveryAttemptEvent),
      onSettled: () => this.checkIdle(),
    });
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
    this.api = this.makeApi();
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException) => {
        this.sender.stop();
        reject(
          error.code === 'EADDRINUSE'
            ? new SimulatorError(
                'PORT_IN_USE',
                `Port ${this.o.port} on ${this.o.host} is in use; pick another or use port 0.`,
              )
            : new SimulatorError(
                'INVALID_OPTIONS',
                `Cannot listen on ${this.o.host}:${this.o.port}: ${error.message}`,
                { cause: error },
              ),
        );
      };
      this.server.once('error', onError);
      this.server.listen(this.o.port, this.o.host, () => {
        this.server.off('error', onError);
        resolve();
      });
    });
    const { port } = this.server.address() as AddressInfo;
    this.port = port;
    this.url = `http://${urlHost(this.o.host)}:${port}`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const target = req.url ?? '/';
      const q = target.indexOf('?');
      const path = q === -1 ? target : target.slice(0, q);
      const query = new URLSearchParams(q === -1 ? '' : target.slice(q + 1));
      if (path === '/_simulator' || path.startsWith('/_simulator/'))
        await handleControlApi(this.api, req, res, path, query);
      else if (path.startsWith('/v1/')) await handleMerchantApi(this.o, this.store, req, res, path);
      else
        throw new SimulatorError(
          'NOT_FOUND',
          `No route ${req.method} ${path}; the merchant API is under /v1, the control API under /_simulator.`,
        );
    } catch (error) {
      if (error instanceof SimulatorError) sendError(res, error);
      else if (!res.headersSent && !req.destroyed) {
        sendError(
          res,
          new SimulatorError(
            'INTERNAL_ERROR',
            `Unexpected error in the simulator: ${(error as Error)?.message ?? error}`,
          ),
        );
      }
    }
  }

  private makeApi(): Simulator {
    const self = this;
    return {
      get url() {
        return self.url;
      },
      get port() {
        return self.port;
      },
      merchants: Object.freeze([...this.o.merchants.values()].map((m) => Object.freeze({ ...m }))),
      retry: Object.freeze({ ...this.o.retry }),
      get faults() {
        return Object.freeze({ ...self.faults });
      },
      seed: this.o.seed,
      pay: (paymentId, options) => this.pay(paymentId, options),
      expire: (paymentId) => this.expire(paymentId),
      redeliver: (paymentId, options) => this.redeliver(paymentId, options),
      payment: (paymentId) => {
        const record = this.store.get(paymentId);
        return record === undefined ? undefined : this.store.view(record);
      },
      payments: () => this.store.all().map((r) => this.store.view(r)),
      deliveries: (filter) => this.sender.list(filter ?? {}),
      delivery: (deliveryId) => this.sender.get(deliveryId),
      setFaults: (faults) => {
        this.faults = resolveFaults(faults, this.faults, (m) => new SimulatorError('INVALID_FAULTS', m));
        return Object.freeze({ ...this.faults });
      },
      waitForIdle: (options) => this.waitForIdle(options?.timeoutMs),
      stop: () => this.stop(),
    };
  }

  private async pay(paymentId: string, options: PayOptions | undefined): Promise<PayResult> {
    this.assertRunning();
    const pay = resolvePayOptions(options);
    const record = this.store.require(paymentId);
    const status = this.store.status(record);
    if (status === 'EXPIRED')
      throw new SimulatorError('PAYMENT_EXPIRED', `Payment ${paymentId} has expired; it can no longer be paid.`);
    if (record.phase !== 'pending') {
      throw new SimulatorError(
        'PAYMENT_ALREADY_PAID',
        `Payment ${paymentId} is already ${record.phase === 'paid' ? 'paid' : 'being confirmed'}.`,
      );
    }
    const paidAmount = pay.amount ?? record.input.amount;
    let amountRaw = pay.amountRaw;
    if (amountRaw === undefined) {
      try {
        amountRaw = toRawAmount(paidAmount, this.o.tokenDecimals[record.input.tokenSymbol] ?? 18);
      } catch (error) {
        throw new SimulatorError('INVALID_PAY_OPTIONS', `amount: ${(error as Error).message} Pass amountRaw yourself.`);
      }
    }

    record.phase = 'confirming';
    record.txId = pay.txId ?? newTxId();
    record.paymentNetwork = pay.network;
    record.paidAmount = paidAmount;
    record.amountRaw = amountRaw;
    record.blockNum = pay.blockNum === undefined ? String(this.nextBlock++) : pay.blockNum;
    record.confirmations = record.blockNum === null ? null : 0;
    this.confirming += 1;
    try {
      if (record.blockNum !== null) {
        for (let i = 1; i <= record.merchant.confirmations; i += 1) {
          if (this.o.confirmationIntervalMs > 0) await this.sleep(this.o.confirmationIntervalMs);
          record.confirmations = i;
        }
      }
      record.phase = 'paid';
      record.paidAt = new Date(this.o.now()).toISOString();
      record.webhookBody = JSON.stringify({
        event: 'payment.paid',
        paymentId: record.paymentId,
        orderNo: record.input.orderNo,
        txId: record.txId,
        tokenSymbol: record.input.tokenSymbol,
        paymentNetwork: record.paymentNetwork,
        amount: paidAmount,
        amountRaw,
        blockNum: record.blockNum,
        confirmations: record.confirmations,
        paidAt: record.paidAt,
      });
      const deliveryIds = this.deliver(record, pay, 'original');
      return { payment: this.store.view(record), deliveryIds };
    } finally {
      // stop() has already zeroed the count and woken the waiters.
      if (!this.stopped) {
        this.confirming -= 1;
        this.checkIdle();
      }
    }
  }

  private expire(paymentId: string): SimulatedPayment {
    this.assertRunning();
    const record = this.store.require(paymentId);
    if (record.phase === 'confirming' || record.phase === 'paid') {
      throw new SimulatorError('PAYMENT_ALREADY_PAID', `Payment ${paymentId} is already paid; it cannot expire.`);
    }
    record.phase = 'expired';
    return this.store.view(record);
  }

  private redeliver(paymentId: string, options: DeliveryFaultOptions | undefined): string[] {
    this.assertRunning();
    const faults = resolveDeliveryFaults(options);
    const record = this.store.require(paymentId);
    if (record.phase !== 'paid')
      throw new SimulatorError('PAYMENT_NOT_PAID', `Payment ${paymentId} is not paid; there is nothing to redeliver.`);
    return this.deliver(record, faults, 'redelivery');
  }

  /** Plans the deliveries of one paid event (first one, duplicates, targets, faults) and starts them. */
  private deliver(record: PaymentRecord, f: ResolvedDeliveryFaults, firstKind: 'original' | 'redelivery'): string[] {
    let sequential = 0;
    let concurrent = 0;
    if (f.duplicates !== undefined || f.concurrent !== undefined) {
      const count = f.duplicates ?? 1;
      if (f.concurrent === true) concurrent = count;
      else sequential = count;
    } else {
      if (this.faults.duplicateRate > 0 && this.random() < this.faults.duplicateRate) sequential = 1;
      if (this.faults.concurrentDuplicateRate > 0 && this.random() < this.faults.concurrentDuplicateRate)
        concurrent = 1;
    }
    const targets = f.deliverTo ?? [record.input.notifyUrl];
    const clockSkewSec = f.clockSkewSec ?? this.faults.clockSkewSec;
    let index = 0;
    const plan = (kind: DeliveryPlan['kind'], dropFirst: number): DeliveryPlan => ({
      paymentId: record.paymentId,
      orderNo: record.input.orderNo,
      merchant: record.merchant.apiKey,
      webhookSecret: record.merchant.webhookSecret,
      url: targets[index++ % targets.length] as string,
      kind,
      body: record.webhookBody as string,
      dropFirst,
      clockSkewSec,
    });
    const immediate = [plan(firstKind, f.dropResponses)];
    for (let i = 0; i < concurrent; i += 1) immediate.push(plan('concurrent-duplicate', 0));
    const chained = Array.from({ length: sequential }, () => plan('duplicate', 0));
    return this.sender.enqueue(immediate, chained);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const sleeper: Sleeper = {
        timer: setTimeout(() => {
          this.sleepers.delete(sleeper);
          resolve();
        }, ms),
        reject,
      };
      this.sleepers.add(sleeper);
    });
  }

  private get idle(): boolean {
    return this.confirming === 0 && this.sender.pending === 0;
  }

  private checkIdle(): void {
    if (!this.idle) return;
    for (const resolve of this.idleWaiters) resolve();
    this.idleWaiters.clear();
  }

  private waitForIdle(timeoutMs = 30_000): Promise<void> {
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0) {
      return Promise.reject(
        new SimulatorError(
          'INVALID_OPTIONS',
          `timeoutMs must be a whole number of milliseconds >= 0, got ${timeoutMs}.`,
        ),
      );
    }
    if (this.idle || this.stopped) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.idleWaiters.delete(done);
        reject(
          new SimulatorError(
            'IDLE_TIMEOUT',
            `Still busy after ${timeoutMs} ms: ${this.sender.pending} deliveries pending, ${this.confirming} payments confirming.`,
          ),
        );
      }, timeoutMs);
      this.idleWaiters.add(done);
    });
  }

  private assertRunning(): void {
    if (this.stopped) throw new SimulatorError('SIMULATOR_STOPPED', 'The simulator has been stopped.');
  }

  private async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.sender.stop();
    for (const s of this.sleepers) {
      clearTimeout(s.timer);
      s.reject(
        new SimulatorError('SIMULATOR_STOPPED', 'The simulator stopped while the payment was gathering confirmations.'),
      );
    }
    this.sleepers.clear();
    this.confirming = 0;
    this.checkIdle();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

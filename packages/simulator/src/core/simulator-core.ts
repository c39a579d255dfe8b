import { randomBytes } from 'node:crypto';
import type { CreatePaymentInput } from '@service-pay/client';
import { timerMs, toRawAmount } from '@service-pay/core';
import type { DeliveryAttemptEvent, DeliveryRecord, DeliveryState } from './delivery-log.js';
import { SimulatorError } from './errors.js';
import { newTxId } from './ids.js';
import { type MerchantApiFault, type MerchantApiFaultOptions, MerchantApiFaults } from './merchant-api-fault.js';
import {
  type FaultOptions,
  type ResolvedFaults,
  type ResolvedMerchant,
  type ResolvedOptions,
  resolveFaults,
} from './options.js';
import {
  type DeliveryFaultOptions,
  type PaymentAmendment,
  type PayOptions,
  type ResolvedDeliveryFaults,
  resolveAmendment,
  resolveDeliveryFaults,
  resolvePayOptions,
} from './pay-options.js';
import { assertPaymentInput, boundProblems } from './payment-input.js';
import { type PaymentRecord, PaymentStore, type SimulatedPayment } from './payment-store.js';
import { seededRandom } from './random.js';
import { type DeliveryPlan, snapshot, WebhookSender } from './webhook-sender.js';

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
 * A test payment made without the merchant API (the dashboard, `service-pay trigger`, a test): every
 * field optional. Defaults: a fresh `test_` order number, `USDT`, `10.00`, one hour, and the simulator's
 * `forwardTo` as notifyUrl (required when the simulator has none). The first merchant unless `merchant`
 * names another by apiKey or name. The same checks as `POST /v1/payments` apply.
 *
 * @example
 * ```ts
 * const payment = sim.createPayment({ amount: '5.00', notifyUrl: 'http://127.0.0.1:3000/webhooks/service' });
 * await sim.pay(payment.paymentId);
 * ```
 */
export interface TestPaymentInput {
  orderNo?: string | undefined;
  tokenSymbol?: string | undefined;
  amount?: string | undefined;
  expireSec?: number | undefined;
  notifyUrl?: string | undefined;
  /** apiKey or name of the merchant; default the first one. */
  merchant?: string | undefined;
}

/**
 * What the core reports as it changes, for live views (the dashboard's event stream).
 *
 * @example
 * ```ts
 * const show = (e: SimulatorEvent) => (e.type === 'delivery' ? console.log(e.delivery.state) : undefined);
 * ```
 */
export type SimulatorEvent =
  | { type: 'payment'; payment: SimulatedPayment }
  | { type: 'delivery'; delivery: DeliveryRecord }
  | { type: 'faults'; faults: Readonly<ResolvedFaults> }
  | { type: 'merchant-api-fault'; fault: MerchantApiFault | null };

/** Simulated chain height; blocks of consecutive payments follow each other. */
const FIRST_BLOCK = 61_000_000;
const TEST_PAYMENT_FIELDS = new Set(['orderNo', 'tokenSymbol', 'amount', 'expireSec', 'notifyUrl', 'merchant']);

interface Sleeper {
  timer: ReturnType<typeof setTimeout>;
  reject: (error: SimulatorError) => void;
}

/**
 * The simulator itself: payments, their confirmations, the webhook sender and every fault. It knows no
 * HTTP server, page or command line; the merchant API, the control API, the dashboard and the CLI sit on
 * top of it and nothing here imports them.
 */
export class SimulatorCore {
  readonly store: PaymentStore;
  readonly apiFaults: MerchantApiFaults;
  private readonly sender: WebhookSender;
  private readonly random: () => number;
  private faultsInForce: ResolvedFaults;
  private nextBlock = FIRST_BLOCK;
  private confirming = 0;
  private stopped = false;
  private readonly sleepers = new Set<Sleeper>();
  private readonly idleWaiters = new Set<() => void>();
  private readonly listeners = new Set<(event: SimulatorEvent) => void>();

  constructor(readonly o: ResolvedOptions) {
    this.store = new PaymentStore(o.now, o.retain.payments);
    this.random = seededRandom(o.seed);
    this.faultsInForce = o.faults;
    this.apiFaults = new MerchantApiFaults(() => {
      if (this.listeners.size > 0) this.emit({ type: 'merchant-api-fault', fault: this.apiFaults.current });
    });
    this.sender = new WebhookSender({
      retry: o.retry,
      now: o.now,
      dropRate: () => this.faultsInForce.dropResponseRate,
      seed: o.seed,
      retain: o.retain.deliveries,
      onAttempt: (delivery, attempt) => o.onDeliveryAttempt?.({ delivery, attempt } satisfies DeliveryAttemptEvent),
      onChange: (delivery) => {
        if (this.listeners.size > 0) this.emit({ type: 'delivery', delivery: snapshot(delivery) });
      },
      onSettled: () => this.checkIdle(),
    });
  }

  get faults(): Readonly<ResolvedFaults> {
    return Object.freeze({ ...this.faultsInForce });
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Listens to every change; returns the function that stops listening. A throwing listener is ignored. */
  subscribe(listener: (event: SimulatorEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A payment through the merchant API: the input checked (shapes, then the simulator's bounds). */
  createPayment(merchant: ResolvedMerchant, input: unknown): SimulatedPayment {
    this.assertRunning();
    const checked = assertPaymentInput(input, this.o.limits);
    this.assertDecimals(checked.amount, checked.tokenSymbol, 'INVALID_AMOUNT');
    return this.changed(this.store.create(merchant, checked));
  }

  /** A payment without the merchant API, with defaults (see `TestPaymentInput`). */
  createTestPayment(input: TestPaymentInput | undefined): SimulatedPayment {
    this.assertRunning();
    const given = input ?? {};
    if (given === null || typeof given !== 'object' || Array.isArray(given))
      throw new SimulatorError('INVALID_BODY', 'The test payment must be an object such as { "amount": "5.00" }.');
    for (const key of Object.keys(given)) {
      if (!TEST_PAYMENT_FIELDS.has(key))
        throw new SimulatorError(
          'INVALID_BODY',
          `Unknown field "${key}"; known: ${[...TEST_PAYMENT_FIELDS].join(', ')}.`,
        );
    }
    const merchant = this.merchantNamed(given.merchant);
    const notifyUrl = given.notifyUrl ?? this.o.forwardTo ?? undefined;
    if (notifyUrl === undefined) {
      throw new SimulatorError(
        'INVALID_NOTIFY_URL',
        'notifyUrl is required: this simulator has no forwardTo (service-pay listen --forward-to URL) to use instead.',
      );
    }
    const payment: CreatePaymentInput = {
      orderNo: given.orderNo ?? `test_${randomBytes(6).toString('hex')}`,
      tokenSymbol: given.tokenSymbol ?? 'USDT',
      amount: given.amount ?? '10.00',
      expireSec: given.expireSec ?? 3600,
      notifyUrl,
    };
    return this.createPayment(merchant, payment);
  }

  async pay(paymentId: string, options: PayOptions | undefined): Promise<PayResult> {
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
    const amountRaw = pay.amountRaw ?? this.rawAmount(paidAmount, record.input.tokenSymbol, 'INVALID_PAY_OPTIONS');

    record.phase = 'confirming';
    record.txId = pay.txId ?? newTxId();
    record.paymentNetwork = pay.network;
    record.paidAmount = paidAmount;
    record.amountRaw = amountRaw;
    record.blockNum = pay.blockNum === undefined ? String(this.nextBlock++) : pay.blockNum;
    record.confirmations = record.blockNum === null ? null : 0;
    this.confirming += 1;
    this.changed(record);
    try {
      if (record.blockNum !== null) {
        for (let i = 1; i <= record.merchant.confirmations; i += 1) {
          if (this.o.confirmationIntervalMs > 0) await this.sleep(this.o.confirmationIntervalMs);
          record.confirmations = i;
          if (this.o.confirmationIntervalMs > 0) this.changed(record);
        }
      }
      record.phase = 'paid';
      record.paidAt = new Date(this.o.now()).toISOString();
      record.webhookBody = webhookBody(record);
      this.changed(record);
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

  expire(paymentId: string): SimulatedPayment {
    this.assertRunning();
    const record = this.store.require(paymentId);
    if (record.phase === 'confirming' || record.phase === 'paid') {
      throw new SimulatorError('PAYMENT_ALREADY_PAID', `Payment ${paymentId} is already paid; it cannot expire.`);
    }
    record.phase = 'expired';
    return this.changed(record);
  }

  redeliver(paymentId: string, options: DeliveryFaultOptions | undefined): string[] {
    this.assertRunning();
    const faults = resolveDeliveryFaults(options);
    const record = this.store.require(paymentId);
    if (record.phase !== 'paid')
      throw new SimulatorError('PAYMENT_NOT_PAID', `Payment ${paymentId} is not paid; there is nothing to redeliver.`);
    return this.deliver(record, faults, 'redelivery');
  }

  /**
   * Changes a payment's fields (see `PaymentAmendment`). Deliveries already made keep the body they sent;
   * `GET /v1/payments/:id` and later redeliveries show the new values.
   */
  amend(paymentId: string, changes: PaymentAmendment): SimulatedPayment {
    this.assertRunning();
    const amendment = resolveAmendment(changes);
    const record = this.store.require(paymentId);
    if (record.phase === 'confirming') {
      throw new SimulatorError(
        'PAYMENT_CONFIRMING',
        `Payment ${paymentId} is gathering confirmations; amend it before paying or once it is PAID.`,
      );
    }
    const paid = record.phase === 'paid';
    const paidOnly = (['amountRaw', 'txId', 'network'] as const).filter((k) => amendment[k] !== undefined);
    if (!paid && paidOnly.length > 0) {
      throw new SimulatorError(
        'PAYMENT_NOT_PAID',
        `Payment ${paymentId} is not paid; ${paidOnly.join(', ')} can only be changed on a paid payment.`,
      );
    }
    const next = { ...record.input };
    if (amendment.orderNo !== undefined) next.orderNo = amendment.orderNo;
    if (amendment.tokenSymbol !== undefined) next.tokenSymbol = amendment.tokenSymbol;
    if (amendment.amount !== undefined) next.amount = amendment.amount;
    const problem = boundProblems(next as unknown as Record<string, unknown>, this.o.limits).find(
      (p) => p.field === 'orderNo' || p.field === 'tokenSymbol' || p.field === 'amount',
    );
    if (problem !== undefined) throw new SimulatorError('INVALID_AMENDMENT', problem.message);
    if (amendment.amount !== undefined || amendment.tokenSymbol !== undefined)
      this.assertDecimals(next.amount, next.tokenSymbol, 'INVALID_AMENDMENT');
    let amountRaw = amendment.amountRaw;
    if (paid && amountRaw === undefined && (amendment.amount !== undefined || amendment.tokenSymbol !== undefined)) {
      amountRaw = this.rawAmount(
        amendment.amount ?? (record.paidAmount as string),
        next.tokenSymbol,
        'INVALID_AMENDMENT',
      );
    }
    // Checks done: from here on nothing throws but the order number index, which changes nothing if it does.
    if (next.orderNo !== record.input.orderNo) this.store.renameOrder(record, next.orderNo);
    record.input = next;
    if (paid) {
      if (amendment.amount !== undefined) record.paidAmount = amendment.amount;
      if (amountRaw !== undefined) record.amountRaw = amountRaw;
      if (amendment.txId !== undefined) record.txId = amendment.txId;
      if (amendment.network !== undefined) record.paymentNetwork = amendment.network;
      record.webhookBody = webhookBody(record);
    }
    return this.changed(record);
  }

  payment(paymentId: string): SimulatedPayment | undefined {
    const record = this.store.get(paymentId);
    return record === undefined ? undefined : this.store.view(record);
  }

  payments(): SimulatedPayment[] {
    return this.store.all().map((r) => this.store.view(r));
  }

  deliveries(filter?: { paymentId?: string | undefined; state?: DeliveryState | undefined }): DeliveryRecord[] {
    return this.sender.list(filter ?? {});
  }

  delivery(deliveryId: string): DeliveryRecord | undefined {
    return this.sender.get(deliveryId);
  }

  /** Finished deliveries dropped from the log to stay within `retain.deliveries`. */
  get droppedDeliveries(): number {
    return this.sender.dropped;
  }

  get pendingDeliveries(): number {
    return this.sender.pending;
  }

  setFaults(faults: FaultOptions): Readonly<ResolvedFaults> {
    this.faultsInForce = resolveFaults(faults, this.faultsInForce, (m) => new SimulatorError('INVALID_FAULTS', m));
    if (this.listeners.size > 0) this.emit({ type: 'faults', faults: this.faults });
    return this.faults;
  }

  failMerchantApi(fault: MerchantApiFaultOptions): MerchantApiFault {
    this.assertRunning();
    return this.apiFaults.set(fault);
  }

  waitForIdle(wait?: number): Promise<void> {
    let timeoutMs: number;
    try {
      // Infinity (wait as long as it takes) is held at what a timer can wait; a longer delay fires at once.
      timeoutMs = timerMs(wait, 30_000, 'timeoutMs', {
        zero: true,
        forever: true,
        error: (message) => new SimulatorError('INVALID_OPTIONS', message),
      });
    } catch (error) {
      return Promise.reject(error);
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

  /** Cancels every retry, request and confirmation; the core refuses work afterwards. */
  stop(): void {
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
    this.listeners.clear();
  }

  assertRunning(): void {
    if (this.stopped) throw new SimulatorError('SIMULATOR_STOPPED', 'The simulator has been stopped.');
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
      if (this.faultsInForce.duplicateRate > 0 && this.random() < this.faultsInForce.duplicateRate) sequential = 1;
      if (this.faultsInForce.concurrentDuplicateRate > 0 && this.random() < this.faultsInForce.concurrentDuplicateRate)
        concurrent = 1;
    }
    const targets = f.deliverTo ?? [this.o.forwardTo ?? record.input.notifyUrl];
    const clockSkewSec = f.clockSkewSec ?? this.faultsInForce.clockSkewSec;
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
      delayMs: f.delayMs,
      endpointDown: f.failAllAttempts,
    });
    const immediate = [plan(firstKind, f.dropResponses)];
    for (let i = 0; i < concurrent; i += 1) immediate.push(plan('concurrent-duplicate', 0));
    const chained = Array.from({ length: sequential }, () => plan('duplicate', 0));
    return this.sender.enqueue(immediate, chained);
  }

  private merchantNamed(name: string | undefined): ResolvedMerchant {
    const merchants = [...this.o.merchants.values()];
    if (name === undefined) return merchants[0] as ResolvedMerchant;
    const found = this.o.merchants.get(name) ?? merchants.find((m) => m.name === name);
    if (found === undefined) {
      throw new SimulatorError(
        'INVALID_BODY',
        `No merchant ${JSON.stringify(name)}; known: ${merchants.map((m) => m.name).join(', ')}.`,
      );
    }
    return found;
  }

  private assertDecimals(amount: string, tokenSymbol: string, code: 'INVALID_AMOUNT' | 'INVALID_AMENDMENT'): void {
    const decimals = this.o.tokenDecimals[tokenSymbol] ?? 18;
    const fraction = amount.split('.')[1] ?? '';
    if (fraction.length > decimals) {
      throw new SimulatorError(
        code,
        `amount "${amount}" has more fraction digits than ${tokenSymbol} has decimals (${decimals}).`,
      );
    }
  }

  private rawAmount(amount: string, tokenSymbol: string, code: 'INVALID_PAY_OPTIONS' | 'INVALID_AMENDMENT'): string {
    try {
      return toRawAmount(amount, this.o.tokenDecimals[tokenSymbol] ?? 18);
    } catch (error) {
      throw new SimulatorError(code, `amount: ${(error as Error).message} Pass amountRaw yourself.`);
    }
  }

  /** Reports the payment to listeners and returns its view. */
  private changed(record: PaymentRecord): SimulatedPayment {
    const view = this.store.view(record);
    if (this.listeners.size > 0) this.emit({ type: 'payment', payment: view });
    return view;
  }

  private emit(event: SimulatorEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A live view must not break the simulator.
      }
    }
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
}

/** The spec 2.3 body, from the record as it stands. */
function webhookBody(record: PaymentRecord): string {
  return JSON.stringify({
    event: 'payment.paid',
    paymentId: record.paymentId,
    orderNo: record.input.orderNo,
    txId: record.txId,
    tokenSymbol: record.input.tokenSymbol,
    paymentNetwork: record.paymentNetwork,
    amount: record.paidAmount,
    amountRaw: record.amountRaw,
    blockNum: record.blockNum,
    confirmations: record.confirmations,
    paidAt: record.paidAt,
  });
}

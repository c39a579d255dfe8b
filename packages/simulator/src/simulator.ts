import type { DeliveryRecord, DeliveryState } from './core/delivery-log.js';
import type { MerchantApiFault, MerchantApiFaultOptions } from './core/merchant-api-fault.js';
import {
  type FaultOptions,
  type ResolvedFaults,
  type ResolvedMerchant,
  type ResolvedRetry,
  resolveOptions,
  type SimulatorOptions,
} from './core/options.js';
import type { DeliveryFaultOptions, PaymentAmendment, PayOptions } from './core/pay-options.js';
import type { PaymentLimits } from './core/payment-input.js';
import type { SimulatedPayment } from './core/payment-store.js';
import { type PayResult, SimulatorCore, type TestPaymentInput } from './core/simulator-core.js';
import { SimulatorServer } from './http/server.js';

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
 * The simulator-wide faults with defaults filled in.
 *
 * @example
 * ```ts
 * const faults: SimulatorFaults = sim.setFaults({ dropResponseRate: 0.1 });
 * ```
 */
export type SimulatorFaults = Readonly<ResolvedFaults>;

/**
 * A running simulator: its address, and the helpers a test, a demo, the dashboard or the control API
 * drive it with.
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
  /** The dashboard: `url` + `/`. */
  readonly dashboardUrl: string;
  readonly port: number;
  /** The address the server is bound to, as given (`127.0.0.1`, `0.0.0.0`, ...); `url` is how to reach it here. */
  readonly host: string;
  /**
   * This run's control token: every state-changing control API call carries it in `X-Simulator-Token`
   * (reads too when `host` is not loopback). The dashboard gets it from its own page.
   */
  readonly controlToken: string;
  readonly merchants: readonly SimulatorMerchant[];
  /** Delivery timing in force (defaults filled in: 8 attempts, 1000 ms x 2 backoff, 5000 ms timeout). */
  readonly retry: Readonly<Required<ResolvedRetry>>;
  /** The simulator-wide faults in force. */
  readonly faults: SimulatorFaults;
  /** Where every webhook goes instead of the payment's notifyUrl, or null (see the `forwardTo` option). */
  readonly forwardTo: string | null;
  /** Bounds of payment inputs in force. */
  readonly limits: Readonly<PaymentLimits>;
  /** Seed of the fault generator: pass it back as `seed` to repeat a run. */
  readonly seed: number;
  /** The merchant API fault in force, or null (see `failMerchantApi`). */
  readonly merchantApiFault: MerchantApiFault | null;
  /**
   * Makes a PENDING test payment without the merchant API (defaults in `TestPaymentInput`); the same
   * checks as `POST /v1/payments`.
   */
  createPayment(input?: TestPaymentInput): SimulatedPayment;
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
  /**
   * Changes a payment's fields for conflict tests (see `PaymentAmendment`): `GET /v1/payments/:id` shows
   * them at once, later redeliveries carry them. Throws `INVALID_AMENDMENT`, `PAYMENT_NOT_FOUND`,
   * `PAYMENT_NOT_PAID` (paid-only fields), `PAYMENT_CONFIRMING` or `DUPLICATE_ORDER_NO`.
   */
  amendPayment(paymentId: string, changes: PaymentAmendment): SimulatedPayment;
  payment(paymentId: string): SimulatedPayment | undefined;
  /** Every payment, oldest first. */
  payments(): SimulatedPayment[];
  /** The delivery log, oldest first; snapshots, safe to keep. */
  deliveries(filter?: { paymentId?: string | undefined; state?: DeliveryState | undefined }): DeliveryRecord[];
  delivery(deliveryId: string): DeliveryRecord | undefined;
  /** Changes the simulator-wide faults; fields left out keep their value. Returns the faults in force. */
  setFaults(faults: FaultOptions): SimulatorFaults;
  /**
   * Makes the merchant API answer 429, 500 or 503 for the next `count` requests or for `durationMs`
   * (replacing any fault in force); throws `INVALID_API_FAULT` for a bad one.
   */
  failMerchantApi(fault: MerchantApiFaultOptions): MerchantApiFault;
  /** Ends the merchant API fault in force, if any. */
  clearMerchantApiFault(): void;
  /**
   * Resolves when no payment is confirming and no delivery is pending; rejects with IDLE_TIMEOUT after
   * `timeoutMs` (default 30 000, at most 2,147,483,647; `Infinity` waits that maximum, about 24.8 days).
   */
  waitForIdle(options?: { timeoutMs?: number | undefined }): Promise<void>;
  /** Stops the server, cancels every pending retry and in-flight request, clears every timer. */
  stop(): Promise<void>;
}

/**
 * Starts the local payment service: the merchant API (spec 4, 5.1) and signed `payment.paid` webhooks
 * (spec 5.2, 6) with the spec's retries, plus a dashboard at `/`, a control API under `/_simulator` and
 * fault injection. One plain `node:http` server; everything lives in memory until `stop()`.
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
  const o = resolveOptions(options);
  const core = new SimulatorCore(o);
  const server = new SimulatorServer(core);
  try {
    await server.listen(o.port, o.host);
  } catch (error) {
    core.stop();
    throw error;
  }
  let stopping: Promise<void> | undefined;
  return {
    url: server.url,
    dashboardUrl: `${server.url}/`,
    port: server.port,
    host: o.host,
    controlToken: o.controlToken,
    merchants: Object.freeze([...o.merchants.values()].map((m) => Object.freeze({ ...m }))),
    retry: Object.freeze({ ...o.retry }),
    get faults() {
      return core.faults;
    },
    forwardTo: o.forwardTo,
    limits: o.limits,
    seed: o.seed,
    get merchantApiFault() {
      return core.apiFaults.current;
    },
    createPayment: (input) => core.createTestPayment(input),
    pay: (paymentId, payOptions) => core.pay(paymentId, payOptions),
    expire: (paymentId) => core.expire(paymentId),
    redeliver: (paymentId, faults) => core.redeliver(paymentId, faults),
    amendPayment: (paymentId, changes) => core.amend(paymentId, changes),
    payment: (paymentId) => core.payment(paymentId),
    payments: () => core.payments(),
    deliveries: (filter) => core.deliveries(filter),
    delivery: (deliveryId) => core.delivery(deliveryId),
    setFaults: (faults) => core.setFaults(faults),
    failMerchantApi: (fault) => core.failMerchantApi(fault),
    clearMerchantApiFault: () => core.apiFaults.clear(),
    waitForIdle: (waitOptions) => core.waitForIdle(waitOptions?.timeoutMs),
    stop: () => {
      stopping ??= (async () => {
        core.stop();
        await server.close();
      })();
      return stopping;
    },
  };
}

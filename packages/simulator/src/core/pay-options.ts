import { SimulatorError } from './errors.js';

/**
 * Faults for the deliveries of one payment. What is given here replaces the simulator-wide rates for
 * this payment; what is left out falls back to them.
 *
 * @example
 * ```ts
 * await sim.redeliver(paymentId, { duplicates: 2, concurrent: true });
 * ```
 */
export interface DeliveryFaultOptions {
  /** Extra deliveries of the same event, each with a fresh `dl_` id. Default: drawn from the rates. */
  duplicates?: number | undefined;
  /** Send the duplicates at the same moment as the first delivery instead of one after another. */
  concurrent?: boolean | undefined;
  /** Throw away the answers to the first N attempts of the first delivery (counted as timeouts). */
  dropResponses?: number | undefined;
  /** Offset of the signing clock in seconds for these deliveries. */
  clockSkewSec?: number | undefined;
  /** Hold each of these deliveries this long before its first attempt (a slow sender). Default 0. */
  delayMs?: number | undefined;
  /**
   * The merchant's endpoint is "down" for these deliveries: every attempt fails without a request being
   * sent (outcome `endpoint-down`), on the usual retry schedule, until the delivery ends `failed` after the
   * last attempt. What a reconciliation test needs: the app never hears of the payment.
   */
  failAllAttempts?: boolean | undefined;
  /**
   * Targets instead of the payment's notifyUrl: the first delivery goes to the first URL, each duplicate
   * to the next one, round robin. Lets a test spread duplicates over several app instances.
   */
  deliverTo?: readonly string[] | undefined;
}

/**
 * What `pay` (and `POST /_simulator/payments/:id/pay`) accepts: the on-chain facts of the payment,
 * all optional, plus delivery faults.
 *
 * @example
 * ```ts
 * await sim.pay(paymentId, { txId: 'a1b2...', network: 'TRON', duplicates: 1 });
 * await sim.pay(otherId, { amount: '1.00' }); // an underpayment: the webhook carries the paid amount
 * ```
 */
export interface PayOptions extends DeliveryFaultOptions {
  /** Default: random 64 hex digits. */
  txId?: string | undefined;
  /** `paymentNetwork` of the webhook. Default `TRON`. */
  network?: string | undefined;
  /** The amount paid, in token units. Default: the payment's amount. */
  amount?: string | undefined;
  /** Default: `amount` in the token's smallest unit (see `tokenDecimals`). */
  amountRaw?: string | undefined;
  /** Default: the next simulated block. `null`: no on-chain record (confirmations null, no waiting). */
  blockNum?: string | null | undefined;
}

export interface ResolvedDeliveryFaults {
  duplicates: number | undefined;
  concurrent: boolean | undefined;
  dropResponses: number;
  clockSkewSec: number | undefined;
  deliverTo: string[] | undefined;
  delayMs: number;
  failAllAttempts: boolean;
}

export interface ResolvedPay extends ResolvedDeliveryFaults {
  txId: string | undefined;
  network: string;
  amount: string | undefined;
  amountRaw: string | undefined;
  blockNum: string | null | undefined;
}

const DIGITS = /^\d{1,78}$/;
const DECIMAL = /^(?:0|[1-9]\d{0,29})(?:\.\d{1,36})?$/;
const TEXT = /^[\x21-\x7e]{1,128}$/;
const PAY_FIELDS = new Set(['txId', 'network', 'amount', 'amountRaw', 'blockNum']);
const FAULT_FIELDS = new Set([
  'duplicates',
  'concurrent',
  'dropResponses',
  'clockSkewSec',
  'deliverTo',
  'delayMs',
  'failAllAttempts',
]);
/** Ten minutes: longer than any test wants to wait, short enough that a typo does not park a delivery for days. */
const MAX_DELAY_MS = 600_000;

function bad(message: string): SimulatorError {
  return new SimulatorError('INVALID_PAY_OPTIONS', message);
}

export function resolveDeliveryFaults(options: unknown, allowed: Set<string> = FAULT_FIELDS): ResolvedDeliveryFaults {
  if (options === undefined || options === null) options = {};
  if (typeof options !== 'object' || Array.isArray(options)) throw bad('Options must be an object.');
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!allowed.has(key)) throw bad(`Unknown option "${key}"; known: ${[...allowed].join(', ')}.`);
  }
  const { duplicates, concurrent, dropResponses, clockSkewSec, deliverTo, delayMs, failAllAttempts } = o;
  if (
    duplicates !== undefined &&
    !(Number.isSafeInteger(duplicates) && (duplicates as number) >= 0 && (duplicates as number) <= 100)
  ) {
    throw bad(`duplicates must be a whole number from 0 to 100, got ${JSON.stringify(duplicates)}.`);
  }
  if (concurrent !== undefined && typeof concurrent !== 'boolean') throw bad('concurrent must be true or false.');
  if (
    dropResponses !== undefined &&
    !(Number.isSafeInteger(dropResponses) && (dropResponses as number) >= 0 && (dropResponses as number) <= 8)
  ) {
    throw bad(`dropResponses must be a whole number from 0 to 8, got ${JSON.stringify(dropResponses)}.`);
  }
  if (clockSkewSec !== undefined && !Number.isSafeInteger(clockSkewSec)) {
    throw bad(`clockSkewSec must be a whole number of seconds, got ${JSON.stringify(clockSkewSec)}.`);
  }
  if (
    delayMs !== undefined &&
    !(Number.isSafeInteger(delayMs) && (delayMs as number) >= 0 && (delayMs as number) <= MAX_DELAY_MS)
  ) {
    throw bad(
      `delayMs must be a whole number of milliseconds from 0 to ${MAX_DELAY_MS}, got ${JSON.stringify(delayMs)}.`,
    );
  }
  if (failAllAttempts !== undefined && typeof failAllAttempts !== 'boolean')
    throw bad('failAllAttempts must be true or false.');
  let urls: string[] | undefined;
  if (deliverTo !== undefined) {
    if (!Array.isArray(deliverTo) || deliverTo.length === 0 || deliverTo.length > 16) {
      throw bad('deliverTo must be a list of 1 to 16 http:// or https:// URLs.');
    }
    urls = deliverTo.map((u) => {
      if (typeof u !== 'string' || !/^https?:\/\//.test(u) || !URL.canParse(u))
        throw bad(`deliverTo has a bad URL: ${JSON.stringify(u)}.`);
      return u;
    });
  }
  return {
    duplicates: duplicates as number | undefined,
    concurrent: concurrent as boolean | undefined,
    dropResponses: (dropResponses as number | undefined) ?? 0,
    clockSkewSec: clockSkewSec as number | undefined,
    deliverTo: urls,
    delayMs: (delayMs as number | undefined) ?? 0,
    failAllAttempts: failAllAttempts === true,
  };
}

export function resolvePayOptions(options: unknown): ResolvedPay {
  const faults = resolveDeliveryFaults(options, new Set([...PAY_FIELDS, ...FAULT_FIELDS]));
  const o = (options ?? {}) as Record<string, unknown>;
  const { txId, network, amount, amountRaw, blockNum } = o;
  if (txId !== undefined && (typeof txId !== 'string' || !TEXT.test(txId)))
    throw bad('txId must be 1 to 128 printable characters.');
  if (network !== undefined && (typeof network !== 'string' || !TEXT.test(network)))
    throw bad('network must be 1 to 128 printable characters, such as "TRON".');
  if (amount !== undefined && (typeof amount !== 'string' || !DECIMAL.test(amount))) {
    throw bad(`amount must be a decimal string such as "12.50", got ${JSON.stringify(amount)}.`);
  }
  if (amountRaw !== undefined && (typeof amountRaw !== 'string' || !DIGITS.test(amountRaw))) {
    throw bad(`amountRaw must be a string of digits, got ${JSON.stringify(amountRaw)}.`);
  }
  if (blockNum !== undefined && blockNum !== null && (typeof blockNum !== 'string' || !DIGITS.test(blockNum))) {
    throw bad(`blockNum must be a string of digits or null, got ${JSON.stringify(blockNum)}.`);
  }
  return {
    ...faults,
    txId: txId as string | undefined,
    network: (network as string | undefined) ?? 'TRON',
    amount: amount as string | undefined,
    amountRaw: amountRaw as string | undefined,
    blockNum: blockNum as string | null | undefined,
  };
}

/**
 * Changes `amendPayment` makes to a payment, for conflict tests: the service says something different
 * about a payment than it said before. Every field is optional; `GET /v1/payments/:id` shows the new
 * values at once, and later (re)deliveries of a paid payment carry them.
 *
 * @example
 * ```ts
 * sim.amendPayment(paymentId, { amount: '99.00' }); // the webhook said 12.50; a redelivery now says 99.00
 * ```
 */
export interface PaymentAmendment {
  orderNo?: string | undefined;
  tokenSymbol?: string | undefined;
  /** The payment's amount and, once paid, the paid amount (and `amountRaw`, unless given). */
  amount?: string | undefined;
  /** Paid payments only. Default: `amount` in the token's smallest unit. */
  amountRaw?: string | undefined;
  /** Paid payments only. */
  txId?: string | undefined;
  /** `paymentNetwork`; paid payments only. */
  network?: string | undefined;
}

const AMEND_FIELDS = new Set(['orderNo', 'tokenSymbol', 'amount', 'amountRaw', 'txId', 'network']);

/** Shapes only (types, known fields); the payment's bounds are checked by the core against its limits. */
export function resolveAmendment(options: unknown): PaymentAmendment {
  const fail = (message: string) => new SimulatorError('INVALID_AMENDMENT', message);
  if (options === null || typeof options !== 'object' || Array.isArray(options))
    throw fail('The amendment must be an object such as { "amount": "99.00" }.');
  const o = options as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined);
  for (const key of keys) {
    if (!AMEND_FIELDS.has(key)) throw fail(`Unknown field "${key}"; known: ${[...AMEND_FIELDS].join(', ')}.`);
    if (typeof o[key] !== 'string') throw fail(`${key} must be a string, got ${JSON.stringify(o[key])}.`);
  }
  if (keys.length === 0) throw fail(`Nothing to change; give any of ${[...AMEND_FIELDS].join(', ')}.`);
  const { txId, network, amountRaw } = o;
  if (txId !== undefined && !TEXT.test(txId as string)) throw fail('txId must be 1 to 128 printable characters.');
  if (network !== undefined && !TEXT.test(network as string))
    throw fail('network must be 1 to 128 printable characters, such as "TRON".');
  if (amountRaw !== undefined && !DIGITS.test(amountRaw as string))
    throw fail(`amountRaw must be a string of digits, got ${JSON.stringify(amountRaw)}.`);
  return o as PaymentAmendment;
}

import { timerMs } from '@service-pay/core';
import type { DeliveryAttemptEvent } from './delivery-log.js';
import { SimulatorError } from './errors.js';
import { newControlToken } from './ids.js';
import type { MerchantConfig } from './merchant.js';
import { type PaymentLimits, resolveLimits } from './payment-input.js';

/**
 * Webhook delivery timing. Defaults follow the spec: 8 attempts, a 5 s answer limit; backoff 1 s, 2 s,
 * 4 s, ... (the spec leaves the intervals open). Tests set small values to run fast.
 *
 * @example
 * ```ts
 * const retry: RetryOptions = { baseDelayMs: 10, factor: 2, timeoutMs: 200 };
 * ```
 */
export interface RetryOptions {
  /** Attempts per delivery, 1 to 8 (the spec's maximum). Default 8. */
  maxAttempts?: number | undefined;
  /** Pause after the first failed attempt. Default 1000 ms. */
  baseDelayMs?: number | undefined;
  /** Each further pause is the previous one times this. Default 2. */
  factor?: number | undefined;
  /** How long an attempt may take to get a complete answer. Default 5000 ms (spec 6). */
  timeoutMs?: number | undefined;
}

/**
 * Faults applied to every payment that does not choose its own (see `PayOptions`). Rates are
 * probabilities from 0 to 1, drawn from a seeded generator (`seed`) so a run can be repeated.
 *
 * @example
 * ```ts
 * const faults: FaultOptions = { duplicateRate: 0.3, concurrentDuplicateRate: 0.1, dropResponseRate: 0.05 };
 * ```
 */
export interface FaultOptions {
  /** Chance that a payment gets one extra delivery (fresh `dl_` id) after the first one settles. */
  duplicateRate?: number | undefined;
  /** Chance that a payment gets one extra delivery sent at the same moment as the first. */
  concurrentDuplicateRate?: number | undefined;
  /** Chance, per attempt, that the receiver's answer is thrown away and counted as a timeout. */
  dropResponseRate?: number | undefined;
  /** Offset of the signing clock in seconds: signatures carry `t = now + clockSkewSec`. */
  clockSkewSec?: number | undefined;
}

/**
 * Options of `startSimulator`.
 *
 * @example
 * ```ts
 * const options: SimulatorOptions = {
 *   merchants: [{ apiKey: 'ak_test', apiSecret: 'sk_test', webhookSecret: 'whsec_test', confirmations: 1 }],
 *   retry: { baseDelayMs: 50 },
 *   faults: { duplicateRate: 0.3 },
 * };
 * ```
 */
export interface SimulatorOptions {
  merchants: readonly MerchantConfig[];
  /** Default 0: a free port (read it from `sim.url`). */
  port?: number | undefined;
  /**
   * Default `127.0.0.1`. Another address (`0.0.0.0`: every interface) puts the dashboard and control API on
   * the network: the control token is then needed for reads too, and the CLI warns.
   */
  host?: string | undefined;
  /**
   * The control token every state-changing control API call must carry (`X-Simulator-Token`). Default: a
   * fresh random one per run (read it from `sim.controlToken`). 16 to 200 characters of `A-Z a-z 0-9 - _ . ~`.
   */
  controlToken?: string | undefined;
  /**
   * How much history is kept: past `payments` (default 10,000) the oldest payment is dropped, past
   * `deliveries` (default 50,000) the oldest finished deliveries are (never one still in progress). A
   * long chaos run stays within a few tens of MB.
   */
  retain?: { payments?: number | undefined; deliveries?: number | undefined } | undefined;
  retry?: RetryOptions | undefined;
  faults?: FaultOptions | undefined;
  /** Pause between two confirmations while a paid payment climbs to its threshold. Default 0. */
  confirmationIntervalMs?: number | undefined;
  /** Decimals per token symbol, for `amountRaw`. Default `{ USDT: 6, USDC: 6 }`; other tokens 18. */
  tokenDecimals?: Readonly<Record<string, number>> | undefined;
  /** Seed of the fault generator. Default: random (read it from `sim.seed`). */
  seed?: number | undefined;
  /** The service clock in milliseconds: payment expiry, the API auth window, webhook timestamps. */
  now?: (() => number) | undefined;
  /** Called after every delivery attempt, for live logs. Errors it throws are ignored. */
  onDeliveryAttempt?: ((event: DeliveryAttemptEvent) => void) | undefined;
  /**
   * Send every webhook here instead of the payment's notifyUrl (what `service-pay listen --forward-to`
   * does), and use it as the notifyUrl of test payments made without one. `deliverTo` of `pay` still wins.
   */
  forwardTo?: string | undefined;
  /** Bounds of payment inputs (the spec leaves them open). Default `DEFAULT_PAYMENT_LIMITS`. */
  limits?: Partial<PaymentLimits> | undefined;
}

export interface ResolvedMerchant {
  apiKey: string;
  apiSecret: string;
  webhookSecret: string;
  confirmations: number;
  name: string;
}

export type ResolvedRetry = Required<{ [K in keyof RetryOptions]-?: number }>;
export type ResolvedFaults = { [K in keyof FaultOptions]-?: number };

export interface ResolvedOptions {
  merchants: Map<string, ResolvedMerchant>;
  port: number;
  host: string;
  retry: ResolvedRetry;
  faults: ResolvedFaults;
  confirmationIntervalMs: number;
  tokenDecimals: Readonly<Record<string, number>>;
  seed: number;
  now: () => number;
  onDeliveryAttempt: ((event: DeliveryAttemptEvent) => void) | undefined;
  forwardTo: string | null;
  limits: Readonly<PaymentLimits>;
  controlToken: string;
  retain: Readonly<{ payments: number; deliveries: number }>;
}

/** The history kept unless `retain` says otherwise. */
export const DEFAULT_RETAIN = Object.freeze({ payments: 10_000, deliveries: 50_000 });

/** The spec's limit (section 8): never more attempts than this. */
export const MAX_ATTEMPTS = 8;
export const DEFAULT_RETRY: ResolvedRetry = Object.freeze({
  maxAttempts: 8,
  baseDelayMs: 1000,
  factor: 2,
  timeoutMs: 5000,
});
const NO_FAULTS: ResolvedFaults = Object.freeze({
  duplicateRate: 0,
  concurrentDuplicateRate: 0,
  dropResponseRate: 0,
  clockSkewSec: 0,
});
const DEFAULT_DECIMALS = Object.freeze({ USDT: 6, USDC: 6 });
const TEN_YEARS_SEC = 315_576_000;

function invalid(message: string): SimulatorError {
  return new SimulatorError('INVALID_OPTIONS', message);
}

function integer(value: unknown, name: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || (value as number) < min || (value as number) > max) {
    throw invalid(`${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}.`);
  }
  return value as number;
}

function text(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 256 || /\s/.test(value)) {
    throw invalid(`${name} must be a non-empty string without spaces (at most 256 characters).`);
  }
  return value;
}

export function resolveOptions(options: SimulatorOptions): ResolvedOptions {
  if (options === null || typeof options !== 'object')
    throw invalid('startSimulator needs an options object with merchants.');
  if (!Array.isArray(options.merchants) || options.merchants.length === 0) {
    throw invalid(
      'merchants must be a non-empty array of { apiKey, apiSecret, webhookSecret, confirmations? } (see generateMerchant()).',
    );
  }
  const merchants = new Map<string, ResolvedMerchant>();
  options.merchants.forEach((m: MerchantConfig, i: number) => {
    if (m === null || typeof m !== 'object') throw invalid(`merchants[${i}] must be an object.`);
    const apiKey = text(m.apiKey, `merchants[${i}].apiKey`);
    if (/[,=]/.test(apiKey))
      throw invalid(
        `merchants[${i}].apiKey must not contain "," or "=" (it is written into the Authorization header).`,
      );
    if (merchants.has(apiKey)) throw invalid(`merchants[${i}].apiKey "${apiKey}" is used twice.`);
    merchants.set(apiKey, {
      apiKey,
      apiSecret: text(m.apiSecret, `merchants[${i}].apiSecret`),
      webhookSecret: text(m.webhookSecret, `merchants[${i}].webhookSecret`),
      confirmations: integer(m.confirmations, `merchants[${i}].confirmations`, 0, 1000, 3),
      name: m.name === undefined ? apiKey : text(m.name, `merchants[${i}].name`),
    });
  });
  const host = options.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host.length === 0)
    throw invalid('host must be a host name or address such as "127.0.0.1".');
  const tokenDecimals = options.tokenDecimals ?? DEFAULT_DECIMALS;
  if (tokenDecimals === null || typeof tokenDecimals !== 'object')
    throw invalid('tokenDecimals must map token symbols to decimals.');
  for (const [symbol, decimals] of Object.entries(tokenDecimals))
    integer(decimals, `tokenDecimals.${symbol}`, 0, 36, 0);
  if (options.now !== undefined && typeof options.now !== 'function')
    throw invalid('now must be a function returning milliseconds.');
  if (options.onDeliveryAttempt !== undefined && typeof options.onDeliveryAttempt !== 'function') {
    throw invalid('onDeliveryAttempt must be a function.');
  }
  const { forwardTo } = options;
  if (
    forwardTo !== undefined &&
    (typeof forwardTo !== 'string' || !/^https?:\/\//.test(forwardTo) || !URL.canParse(forwardTo))
  ) {
    throw invalid(`forwardTo must be an http:// or https:// URL, got ${JSON.stringify(forwardTo)}.`);
  }
  return {
    merchants,
    port: integer(options.port, 'port', 0, 65_535, 0),
    host,
    retry: resolveRetry(options.retry),
    faults: resolveFaults(options.faults, NO_FAULTS, invalid),
    confirmationIntervalMs: integer(options.confirmationIntervalMs, 'confirmationIntervalMs', 0, 600_000, 0),
    tokenDecimals,
    seed: integer(options.seed, 'seed', 0, 2 ** 32 - 1, Math.floor(Math.random() * 2 ** 32)),
    now: options.now ?? Date.now,
    onDeliveryAttempt: options.onDeliveryAttempt,
    forwardTo: forwardTo ?? null,
    limits: resolveLimits(options.limits),
    controlToken: resolveControlToken(options.controlToken),
    retain: resolveRetain(options.retain),
  };
}

function resolveRetain(retain: SimulatorOptions['retain']): ResolvedOptions['retain'] {
  if (retain === undefined) return DEFAULT_RETAIN;
  if (retain === null || typeof retain !== 'object') throw invalid('retain must be an object.');
  return Object.freeze({
    payments: integer(retain.payments, 'retain.payments', 1, 10_000_000, DEFAULT_RETAIN.payments),
    deliveries: integer(retain.deliveries, 'retain.deliveries', 10, 50_000_000, DEFAULT_RETAIN.deliveries),
  });
}

function resolveControlToken(token: unknown): string {
  if (token === undefined) return newControlToken();
  if (typeof token !== 'string' || !/^[A-Za-z0-9\-_.~]{16,200}$/.test(token)) {
    throw invalid('controlToken must be 16 to 200 characters of A-Z a-z 0-9 - _ . ~ (or left out: a random one).');
  }
  return token;
}

function resolveRetry(retry: RetryOptions | undefined): ResolvedRetry {
  if (retry === undefined) return DEFAULT_RETRY;
  if (retry === null || typeof retry !== 'object') throw invalid('retry must be an object.');
  const factor = retry.factor ?? DEFAULT_RETRY.factor;
  if (typeof factor !== 'number' || !(factor >= 1 && factor <= 10))
    throw invalid(`retry.factor must be a number from 1 to 10, got ${JSON.stringify(factor)}.`);
  const resolved = {
    maxAttempts: integer(retry.maxAttempts, 'retry.maxAttempts', 1, MAX_ATTEMPTS, DEFAULT_RETRY.maxAttempts),
    baseDelayMs: integer(retry.baseDelayMs, 'retry.baseDelayMs', 0, 3_600_000, DEFAULT_RETRY.baseDelayMs),
    factor,
    timeoutMs: integer(retry.timeoutMs, 'retry.timeoutMs', 1, 60_000, DEFAULT_RETRY.timeoutMs),
  };
  // Each bound holds alone, not their product: the wait before the last attempt is a timer's delay, and
  // past what a timer holds that retry would come at once.
  const longestWait = resolved.baseDelayMs * factor ** Math.max(0, resolved.maxAttempts - 2);
  timerMs(
    longestWait,
    0,
    'retry.baseDelayMs * retry.factor ** (retry.maxAttempts - 2), the wait before the last attempt,',
    {
      zero: true,
      error: invalid,
    },
  );
  return resolved;
}

/** Validates a fault set on top of `base`; also used by `setFaults` and the control API. */
export function resolveFaults(
  faults: FaultOptions | undefined,
  base: ResolvedFaults,
  fail: (message: string) => SimulatorError,
): ResolvedFaults {
  if (faults === undefined) return base;
  if (faults === null || typeof faults !== 'object' || Array.isArray(faults)) throw fail('faults must be an object.');
  const known = new Set(Object.keys(NO_FAULTS));
  for (const key of Object.keys(faults))
    if (!known.has(key)) throw fail(`Unknown fault "${key}"; known: ${[...known].join(', ')}.`);
  const rate = (value: unknown, name: string, fallback: number) => {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !(value >= 0 && value <= 1))
      throw fail(`${name} must be a probability from 0 to 1, got ${JSON.stringify(value)}.`);
    return value;
  };
  const skew = faults.clockSkewSec ?? base.clockSkewSec;
  if (!Number.isSafeInteger(skew) || Math.abs(skew) > TEN_YEARS_SEC) {
    throw fail(`clockSkewSec must be a whole number of seconds (negative: in the past), got ${JSON.stringify(skew)}.`);
  }
  return {
    duplicateRate: rate(faults.duplicateRate, 'duplicateRate', base.duplicateRate),
    concurrentDuplicateRate: rate(
      faults.concurrentDuplicateRate,
      'concurrentDuplicateRate',
      base.concurrentDuplicateRate,
    ),
    dropResponseRate: rate(faults.dropResponseRate, 'dropResponseRate', base.dropResponseRate),
    clockSkewSec: skew,
  };
}

import { SimulatorError, type SimulatorErrorCode } from './errors.js';

/**
 * Makes the merchant API (`GET`/`POST /v1/payments...`) answer an error for a while, so a client's
 * retries can be tested against the real simulator: the next `count` requests, or every request for
 * `durationMs`, or whichever ends first when both are given (default: the next request only).
 *
 * @example
 * ```ts
 * sim.failMerchantApi({ status: 503, count: 2 });                          // two 503s, then normal answers
 * sim.failMerchantApi({ status: 429, durationMs: 1500, retryAfterSec: 1 }); // 429 + Retry-After: 1 for 1.5 s
 * ```
 */
export interface MerchantApiFaultOptions {
  /** 429 (`RATE_LIMITED`), 500 (`INTERNAL_ERROR`) or 503 (`SERVICE_UNAVAILABLE`). */
  status: 429 | 500 | 503;
  /** Fail this many matching requests, 1 to 100000. */
  count?: number | undefined;
  /** Fail every matching request for this long (real time), 1 ms to 1 hour. */
  durationMs?: number | undefined;
  /** Send `Retry-After: <seconds>` with each refusal, 0 to 86400. */
  retryAfterSec?: number | undefined;
  /** Only requests of this method; default both. */
  method?: 'GET' | 'POST' | undefined;
}

/**
 * The merchant API fault in force, as `sim.merchantApiFault` and `GET /_simulator/merchant-api-fault`
 * show it: what it answers, how many refusals are left (`remaining`, null without `count`), until when
 * (`until`, ISO time, null without `durationMs`) and how many requests it has refused so far.
 *
 * @example
 * ```ts
 * const fault: MerchantApiFault | null = sim.merchantApiFault;
 * console.log(fault?.remaining, fault?.refused);
 * ```
 */
export interface MerchantApiFault {
  status: 429 | 500 | 503;
  code: SimulatorErrorCode;
  retryAfterSec: number | null;
  method: 'GET' | 'POST' | null;
  remaining: number | null;
  until: string | null;
  refused: number;
}

const CODE_BY_STATUS = { 429: 'RATE_LIMITED', 500: 'INTERNAL_ERROR', 503: 'SERVICE_UNAVAILABLE' } as const;
const KNOWN = new Set(['status', 'count', 'durationMs', 'retryAfterSec', 'method']);

/** One fault at a time: setting a new one replaces the old one. Real time, not the service clock. */
export class MerchantApiFaults {
  private fault: (MerchantApiFault & { untilMs: number | null }) | null = null;

  constructor(private readonly onChange: () => void) {}

  set(options: MerchantApiFaultOptions): MerchantApiFault {
    const fail = (message: string) => new SimulatorError('INVALID_API_FAULT', message);
    if (options === null || typeof options !== 'object' || Array.isArray(options))
      throw fail('The fault must be an object such as { "status": 503, "count": 2 }.');
    for (const key of Object.keys(options))
      if (!KNOWN.has(key)) throw fail(`Unknown field "${key}"; known: ${[...KNOWN].join(', ')}.`);
    const { status, count, durationMs, retryAfterSec, method } = options;
    if (status !== 429 && status !== 500 && status !== 503)
      throw fail(`status must be 429, 500 or 503, got ${JSON.stringify(status)}.`);
    const whole = (value: unknown, name: string, min: number, max: number) => {
      if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max))
        throw fail(`${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}.`);
    };
    whole(count, 'count', 1, 100_000);
    whole(durationMs, 'durationMs', 1, 3_600_000);
    whole(retryAfterSec, 'retryAfterSec', 0, 86_400);
    if (method !== undefined && method !== 'GET' && method !== 'POST')
      throw fail(`method must be "GET" or "POST", got ${JSON.stringify(method)}.`);
    const untilMs = durationMs === undefined ? null : Date.now() + durationMs;
    this.fault = {
      status,
      code: CODE_BY_STATUS[status],
      retryAfterSec: retryAfterSec ?? null,
      method: method ?? null,
      remaining: count ?? (durationMs === undefined ? 1 : null),
      until: untilMs === null ? null : new Date(untilMs).toISOString(),
      untilMs,
      refused: 0,
    };
    this.onChange();
    return this.current as MerchantApiFault;
  }

  clear(): void {
    if (this.fault === null) return;
    this.fault = null;
    this.onChange();
  }

  /** The fault in force (an expired one is cleared on the way). */
  get current(): MerchantApiFault | null {
    if (this.fault?.untilMs != null && Date.now() >= this.fault.untilMs) this.clear();
    if (this.fault === null) return null;
    const { untilMs: _, ...view } = this.fault;
    return view;
  }

  /** For one merchant API request: the refusal to answer with, or undefined to serve it normally. */
  take(method: string): { error: SimulatorError; headers: Record<string, string> } | undefined {
    const fault = this.current === null ? null : this.fault;
    if (fault === null || (fault.method !== null && fault.method !== method)) return undefined;
    fault.refused += 1;
    if (fault.remaining !== null) {
      fault.remaining -= 1;
      if (fault.remaining === 0) this.fault = null;
    }
    this.onChange();
    const left = fault.remaining === null ? `until ${fault.until}` : `${fault.remaining} more to refuse`;
    return {
      error: new SimulatorError(fault.code, `Injected merchant API fault: ${fault.status} (${left}); retry later.`),
      headers: fault.retryAfterSec === null ? {} : { 'retry-after': String(fault.retryAfterSec) },
    };
  }
}

import type { DeliveryAttempt } from '../core/delivery-log.js';
import { DEFAULT_SECRETS_FILE } from './dev-secrets.js';
import { receiverRefusal } from './format.js';

/**
 * What a failed attempt means for the person at the terminal: the fix, and whether a retry can change the
 * answer. `setup`: the app's set-up, code or data causes it, so every retry meets the same answer until
 * someone changes the app, and waiting out the sender's retries is pointless. Otherwise a retry may well get
 * past it (a busy payment, a store that was down, a handler that failed once).
 */
export interface Advice {
  /** One line, printed after `fix: `. */
  fix: string;
  setup: boolean;
}

const looksHtml = (body: string) => /^\s*<(!doctype|html|head|body)\b/i.test(body);

const SECRET_FIX = `its webhook secret differs from the one 'service-pay listen' printed (SERVICE_WEBHOOK_SECRET=..., kept in ${DEFAULT_SECRETS_FILE}); set it in the app's environment and restart the app`;

/** Codes whose fix is the app's set-up (or code), whatever their status: a retry gets the same answer. */
const SETUP_CODES: Record<string, (message: string, target: string) => string> = {
  MISSING_SIGNATURE: () =>
    `the app saw no signature header: something in front of the webhook route drops X-Service-Signature (a proxy, a header allow-list)`,
  MALFORMED_SIGNATURE: () =>
    `the app could not read the X-Service-Signature header: something in front of the webhook route rewrites it`,
  SIGNATURE_MISMATCH: () => `the app refused the signature (SIGNATURE_MISMATCH): ${SECRET_FIX}`,
  TIMESTAMP_OUT_OF_TOLERANCE: () =>
    "the app's clock and this machine's differ by more than the app's toleranceSec: synchronise the clock (NTP), or check --clock-skew-sec",
  // Core's message names the framework's own fix (mount the route before the JSON body parser, ...).
  RAW_BODY_UNAVAILABLE: (message) => `the app cannot see the raw body (RAW_BODY_UNAVAILABLE): ${message}`,
  INVALID_PAYLOAD: (message) =>
    `the app could not read the body (INVALID_PAYLOAD: ${message}): something in front of the webhook route changes it`,
  EVENT_MISMATCH: (message) =>
    `the app refused the event header (EVENT_MISMATCH: ${message}); a proxy rewrites headers`,
  MISSING_DELIVERY_ID: () =>
    'the app saw no X-Service-Delivery header: something in front of the webhook route drops it',
  METHOD_NOT_ALLOWED: (_message, target) => `${target} takes no POST: is it the webhook route?`,
  UNSUPPORTED_MEDIA_TYPE: () =>
    'the app refused the content type: something in front of the webhook route changes Content-Type (it is sent as application/json)',
  BODY_TOO_LARGE: () =>
    "the app's body limit (maxBodyBytes, or a body parser's limit in front of the route) is smaller than the webhook",
  INVALID_OPTIONS: (message) =>
    `the webhook handler's options are wrong (INVALID_OPTIONS: ${message}); fix them and restart the app`,
  WRITE_OUTSIDE_TRANSACTION: (message) =>
    `onPaymentPaid wrote outside ctx.tx (WRITE_OUTSIDE_TRANSACTION: ${message}); write through ctx.tx, restart the app, then 'service-pay resend <paymentId>'`,
  PAYLOAD_CONFLICT: () =>
    'the app saw this payment before with other fields (PAYLOAD_CONFLICT, logged as an alert): the same payment id with another order, token or amount; no retry credits it, a person must look',
  QUERY_NOT_AWAITED: (message) =>
    `onPaymentPaid returned before awaiting a ctx.tx query (QUERY_NOT_AWAITED: ${message}); await it, restart the app, then 'service-pay resend <paymentId>'`,
};

/** Codes a retry may well get past: said so, so nobody fixes what is not broken. */
const PASSING_CODES: Record<string, (message: string) => string> = {
  DELIVERY_IN_PROGRESS: () =>
    'nothing to fix: another attempt of this payment was running (a duplicate at the same moment); the sender retries later',
  HANDLER_FAILED: (message) =>
    `onPaymentPaid threw (HANDLER_FAILED: ${message}); the app's log has the stack. Fix the handler, restart the app, then 'service-pay resend <paymentId>' (the simulator also retries)`,
  HANDLER_TIMEOUT: () =>
    "onPaymentPaid ran past handlerTimeoutMs (HANDLER_TIMEOUT): the app's log says where it waited; a retry runs it again",
  COMMIT_FAILED: (message) =>
    `the app's database refused the commit (COMMIT_FAILED: ${message}); nothing was credited, the sender retries`,
  STORE_UNAVAILABLE: () =>
    "the app's store (its database or Redis) did not answer (STORE_UNAVAILABLE): is it running and reachable from the app? The sender retries",
  BODY_TIMEOUT: () =>
    'the body reached the app slower than its bodyTimeoutMs (BODY_TIMEOUT): something in front of the route holds it back; the sender retries',
  INTERNAL_ERROR: (message) =>
    `the SDK failed inside the app (INTERNAL_ERROR: ${message}); the app's log has the stack`,
};

/**
 * The advice for one failed attempt, or null when it succeeded. Every failure gets a line: a known code its
 * own fix, an unknown one the receiver's own words.
 *
 * @example
 * ```ts
 * const advice = adviceFor(attempt, 'http://127.0.0.1:3000/webhooks/service');
 * if (advice !== null) console.error(`fix: ${advice.fix}`);
 * ```
 */
export function adviceFor(attempt: DeliveryAttempt, target: string): Advice | null {
  switch (attempt.outcome) {
    case 'succeeded':
      return null;
    case 'network-error':
      return {
        fix: `nothing answers at ${target}: start your app, or point --forward-to at where it listens`,
        setup: true,
      };
    case 'timeout':
      return {
        fix: `the app did not answer within the webhook timeout: onPaymentPaid (or something before it) hangs; the app's log may say where`,
        setup: false,
      };
    case 'dropped':
    case 'endpoint-down':
      return { fix: 'nothing to fix: a fault the simulator was asked to inject; the sender retries', setup: false };
    case 'http-error':
      break;
  }
  const status = attempt.status ?? 0;
  const refusal = receiverRefusal(attempt.responseBody);
  if (refusal !== null) {
    const setup = SETUP_CODES[refusal.code];
    if (setup !== undefined) return { fix: setup(refusal.message, target), setup: true };
    const passing = PASSING_CODES[refusal.code];
    if (passing !== undefined) return { fix: passing(refusal.message), setup: false };
  }
  const said = refusal === null ? '' : ` (${refusal.code}${refusal.message ? `: ${refusal.message}` : ''})`;
  if (status === 404)
    return {
      fix: `no route at this path${looksHtml(attempt.responseBody) ? ' (the app answered with an HTML 404 page)' : said}: check the path of the app's webhook route against ${target}`,
      setup: true,
    };
  if (status === 401 || status === 403)
    return { fix: `the app refused the delivery with ${status}${said}: ${SECRET_FIX}`, setup: true };
  if (status === 405) return { fix: `${target} takes no POST${said}: is it the webhook route?`, setup: true };
  if (status === 413 || status === 415 || status === 400)
    return {
      fix: `the app refused the request itself with ${status}${said}: something in front of the webhook route (a body parser, a proxy) changes it`,
      setup: true,
    };
  if (status >= 300 && status < 400)
    return {
      fix: `the app answered a redirect (${status}): point --forward-to at the final URL (the sender does not follow redirects)`,
      setup: true,
    };
  return {
    fix: `the app answered ${status}${said}; its log says why. The sender retries`,
    setup: false,
  };
}

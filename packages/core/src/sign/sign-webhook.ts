import { cryptoBackend } from '#crypto';
import { WebhookError } from '../errors/webhook-error.js';
import type { PaymentPaidEvent } from '../event/payment-paid-event.js';
import { checkSecrets } from '../verify/verify-options.js';

/**
 * Input of `signWebhook`.
 *
 * @example
 * ```ts
 * const input: SignWebhookInput = { event: '{"event":"payment.paid"}', secret: 'whsec_test', timestamp: 1700000000 };
 * ```
 */
export interface SignWebhookInput {
  /** The event object (serialized with JSON.stringify) or the exact body text to sign. */
  event: PaymentPaidEvent | string;
  secret: string;
  /** Unix seconds. Default: now. */
  timestamp?: number;
  /** Default: a fresh random `dl_` id. */
  deliveryId?: string;
}

/**
 * Signs a delivery exactly as the payment service does, for tests and local tools. Returns the body and
 * all headers to send: `content-type`, `x-service-event`, `x-service-signature` and `x-service-delivery`.
 *
 * @example
 * ```ts
 * import { signWebhook } from '@service-pay/core';
 *
 * const { body, headers } = signWebhook({ event: myPaymentPaidEvent, secret: 'whsec_test' });
 * await fetch('http://127.0.0.1:3000/webhooks/service', { method: 'POST', body, headers });
 * ```
 */
export function signWebhook(input: SignWebhookInput): { body: string; headers: Record<string, string> } {
  if (input === null || typeof input !== 'object') {
    throw new WebhookError('INVALID_OPTIONS', 'signWebhook needs { event, secret }.');
  }
  // The receiver's rules for a secret: a blank one must never become an HMAC key, here either.
  // Signing is for tests and tools: any secret a receiver could be given, short ones included.
  const [secret] = checkSecrets(input.secret, 1) as [string];
  const body = typeof input.event === 'string' ? input.event : JSON.stringify(input.event);
  if (typeof body !== 'string')
    throw new WebhookError('INVALID_OPTIONS', 'signWebhook needs an event object or a body string.');
  const timestamp = input.timestamp ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new WebhookError('INVALID_OPTIONS', 'signWebhook timestamp must be whole Unix seconds.');
  }
  const t = String(timestamp);
  const signature = cryptoBackend.signPayloadHexSync(secret, t, body);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-service-event': eventTypeOf(input.event),
      'x-service-signature': `t=${t},v1=${signature}`,
      'x-service-delivery': input.deliveryId ?? `dl_${cryptoBackend.randomToken().replaceAll('-', '')}`,
    },
  };
}

function eventTypeOf(event: PaymentPaidEvent | string): string {
  if (typeof event !== 'string') return typeof event.event === 'string' ? event.event : 'payment.paid';
  try {
    const parsed: unknown = JSON.parse(event);
    if (parsed !== null && typeof parsed === 'object' && typeof (parsed as { event?: unknown }).event === 'string') {
      return (parsed as { event: string }).event;
    }
  } catch {
    // A body that is not JSON is a legitimate thing to sign in a test of the receiver's validation.
  }
  return 'payment.paid';
}

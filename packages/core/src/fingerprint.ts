import { cryptoBackend } from '#crypto';
import type { PaymentPaidEvent } from './event.js';

/**
 * A hash of the signed business fields of a payment. Two deliveries of one dedupe key with different
 * fingerprints mean the sender said two different things about one payment: a conflict to alert on,
 * never a duplicate to swallow silently.
 */
export function fingerprintOf(event: PaymentPaidEvent): string {
  // JSON of an array: unambiguous field boundaries whatever the values contain.
  return cryptoBackend.sha256Base64Url(
    JSON.stringify([
      event.paymentId,
      event.orderNo,
      event.tokenSymbol,
      event.paymentNetwork,
      event.amount,
      event.amountRaw,
      event.txId,
    ]),
  );
}

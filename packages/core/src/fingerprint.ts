import { cryptoBackend } from '#crypto';
import type { PaymentPaidEvent } from './event.js';

/**
 * A hash of the signed business fields of a payment. Two deliveries of one dedupe key with different
 * fingerprints mean the sender said two different things about one payment: a conflict to alert on,
 * never a duplicate to swallow silently.
 */
export function fingerprintOf(event: PaymentPaidEvent): string {
  // Each field prefixed by its length: unambiguous boundaries whatever the values contain, and cheaper
  // than serialising an array on every delivery.
  const { paymentId, orderNo, tokenSymbol, paymentNetwork, amount, amountRaw, txId } = event;
  return cryptoBackend.sha256Base64Url(
    `${paymentId.length}:${paymentId}${orderNo.length}:${orderNo}${tokenSymbol.length}:${tokenSymbol}` +
      `${paymentNetwork.length}:${paymentNetwork}${amount.length}:${amount}${amountRaw.length}:${amountRaw}` +
      `${txId.length}:${txId}`,
  );
}

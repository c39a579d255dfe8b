import type { InboxRecord } from '@service-pay/core';

/**
 * The inbox row's values in the order of its columns, as every dialect inserts it: `key, fingerprint,
 * payment_id, delivery_id, source, outcome, reason`, absent ones as `null`.
 *
 * @example
 * ```ts
 * const values = inboxRowValues(key, fingerprint, record); // bound to `VALUES (?, ?, ?, ?, ?, ?, ?)`
 * ```
 */
export function inboxRowValues(
  key: string,
  fingerprint: string,
  record: InboxRecord,
): [string, string, string, string | null, string, string, string | null] {
  return [
    key,
    fingerprint,
    record.paymentId,
    record.deliveryId ?? null,
    record.source,
    record.outcome,
    record.reason ?? null,
  ];
}

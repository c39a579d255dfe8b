import { developmentNotice } from '@service-pay/core';

/**
 * Says once per process, in development (`NODE_ENV` other than `production`), when the first lease-mode
 * `DynamoDbStore` is made, what a lease store promises. It fences attempts across processes, but a lease
 * can be lost between the handler's own write and the store's record, so a credit that is not idempotent
 * itself can happen twice; `transactional: true` commits the credit with the record instead. Silent in
 * production; a console line, because the default logger shows no info.
 *
 * @example
 * ```ts
 * noteLeaseStore(); // when a lease-mode store is made
 * ```
 */
export function noteLeaseStore(): void {
  developmentNotice(
    'DynamoDbStore lease store',
    "[service-pay] DynamoDbStore is a lease store (transactional not set): it lets one attempt at a time run the handler, across processes, but a lease can be lost between your credit and the store's record, so the credit is exactly once only if it is idempotent itself (a condition on paymentId, or the API's idempotency key). For exactly once by construction, pass transactional: true and queue the credit's writes on ctx.tx: they commit with the record in one TransactWriteItems. (Said once, outside NODE_ENV=production.)",
  );
}

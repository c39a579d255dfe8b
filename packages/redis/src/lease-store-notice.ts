import { developmentNotice } from '@service-pay/core';

/**
 * Says once per process, in development (`NODE_ENV` other than `production`), when the first
 * `RedisDedupeStore` is made, what a lease store promises. It fences attempts across processes, but a
 * lease can be lost between the handler's own commit and the store's record, so a credit that is not
 * idempotent itself can happen twice. Silent in production, where the choice has been made; a console
 * line, because the default logger shows no info and this is no warning about a delivery.
 *
 * @example
 * ```ts
 * noteLeaseStore(); // in the store's constructor
 * ```
 */
export function noteLeaseStore(): void {
  developmentNotice(
    'RedisDedupeStore lease store',
    "[service-pay] RedisDedupeStore is a lease store: it lets one attempt at a time run the handler, across processes, but a lease can be lost between your credit and the store's record, so the credit is exactly once only if it is idempotent itself (a unique key on paymentId, or the API's idempotency key). For exactly once by construction, put the record where the credit is: PostgresStore, MySqlStore, SqliteStore or DynamoDbStore with transactional: true. (Said once, outside NODE_ENV=production.)",
  );
}

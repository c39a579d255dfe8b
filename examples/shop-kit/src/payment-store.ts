import type { DedupeStore, PaymentLedger, TransactionalStore } from '@service-pay/core';
import { PostgresStore } from '@service-pay/postgres';
import { failFastRedisOptions, RedisDedupeStore } from '@service-pay/redis';
import { Redis } from 'ioredis';
import type { Database, Queryable } from './database.ts';

/**
 * The store the webhook handler and the reconciler share: the record of which payments were handled.
 * Transactional (`PostgresStore`, `ctx.tx` is the delivery's transaction) or a lease store (Redis).
 */
export type ShopStore = DedupeStore | TransactionalStore<Queryable>;

/** The shop's store, and what it needs before the first delivery and at the end. */
export interface PaymentStoreHandle {
  store: ShopStore;
  /**
   * `transactional`: the credit joins the store's transaction, and the inbox row commits with it.
   * `lease`: the credit runs its own transaction, guarded by the unique paymentId in `credits`.
   */
  kind: 'transactional' | 'lease';
  /** `PostgresStore`'s inbox table (also the record of rejections); none for a lease store. */
  inboxTable: string | undefined;
  /** Creates what the store keeps its records in (the inbox table); idempotent, run once at boot. */
  ready: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * `PostgresStore` in the shop's own database by default (PGlite, or PostgreSQL with `DATABASE_URL`): the
 * credit and the dedupe record commit in one transaction, so a payment is credited once by construction.
 * With `REDIS_URL`, the Redis lease store instead, as the alternative for a credit that is not (only) a
 * PostgreSQL write; the Redis client is built fail-fast, so an outage answers 503 at once.
 *
 * Synchronous, so Next.js can hand the store to its route before the shop has booted: the store's `begin`
 * waits for `ready()` (the inbox table), which boot also awaits.
 */
export function openPaymentStore(
  database: Database,
  options: { redisUrl: string | undefined; prefix: string },
): PaymentStoreHandle {
  if (options.redisUrl !== undefined) return openRedisStore(options.redisUrl, `${options.prefix || 'shop'}:`);

  const { connection } = database;
  const tableName = `${options.prefix}service_pay_inbox`;
  const postgres: TransactionalStore<Queryable> & { migrate(): Promise<void>; ledger?: PaymentLedger | undefined } =
    'pool' in connection
      ? new PostgresStore({ pool: connection.pool, tableName })
      : new PostgresStore({ pglite: connection.pglite, tableName });
  let migrated: Promise<void> | undefined;
  const ready = () => {
    migrated ??= postgres.migrate().catch((error: unknown) => {
      // A database that was down at boot must not stay failed: the next delivery tries again.
      migrated = undefined;
      throw error;
    });
    return migrated;
  };
  return {
    kind: 'transactional',
    inboxTable: tableName,
    store: {
      kind: 'transactional',
      begin: async (key, fingerprint) => {
        await ready();
        return postgres.begin(key, fingerprint);
      },
      // The operator's ledger (`<inbox>_ledger`, made by the same migrate): the failing payments, for the
      // shop's operator page.
      ...(postgres.ledger && { ledger: postgres.ledger }),
    },
    ready,
    close: async () => {},
  };
}

function openRedisStore(url: string, keyPrefix: string): PaymentStoreHandle {
  const client = new Redis(url, failFastRedisOptions());
  // Outages are answered with 503 by the pipeline; the client's own error events would only be noise.
  client.on('error', () => {});
  return {
    kind: 'lease',
    inboxTable: undefined,
    store: new RedisDedupeStore({ client, keyPrefix }),
    ready: async () => {},
    close: async () => {
      client.disconnect();
    },
  };
}

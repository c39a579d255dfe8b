import { randomUUID } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ClaimOutcome, DedupeStore, PaymentLedger, TransactionalStore, TransactionClaim } from '@service-pay/core';
import { DynamoDbLedger } from './dynamodb-ledger.js';
import { noteLeaseStore } from './lease-store-notice.js';
import { LeaseTable } from './lease-table.js';
import { doneItem } from './record-item.js';
import { checkTableName } from './table-name.js';
import type { DocumentWrites, DynamoDbTransaction, LowLevelWrites } from './transaction.js';
import { DynamoDbSession } from './transaction-session.js';
import { guardWrites, type MiddlewareStackLike } from './write-guard.js';

/**
 * The client the store sends through: `client`, an AWS SDK v3 `DynamoDBClient`, or `documentClient`,
 * lib-dynamodb's `DynamoDBDocumentClient`. Named apart because a document client shares its client's
 * configuration and middleware stack, so nothing public tells the two apart; the name also says which
 * shapes `ctx.tx` takes (attribute values, or plain values).
 *
 * @example
 * ```ts
 * const given: DynamoDbClientOption = { client: new DynamoDBClient({}) };
 * ```
 */
export type DynamoDbClientOption =
  | { client: DynamoDBClient; documentClient?: never }
  | { documentClient: DynamoDBDocumentClient; client?: never };

/**
 * Options both kinds share.
 *
 * @example
 * ```ts
 * const common: DynamoDbStoreCommonOptions = { tableName: 'service_pay_inbox', autoMigrate: false };
 * ```
 */
export interface DynamoDbStoreCommonOptions {
  /** The store's table (3 to 255 of letters, digits, `_`, `-`, `.`). Default `service_pay_inbox`. */
  tableName?: string;
  /**
   * Create the table (and turn its TTL on) the first time a request finds it missing. Default `true`;
   * `false` when the table is made by infrastructure code: the store then answers `TABLE_MISSING` and
   * needs no `dynamodb:CreateTable` permission.
   */
  autoMigrate?: boolean;
}

/**
 * A lease store (the default kind): the handler writes wherever it likes; the store fences attempts.
 *
 * @example
 * ```ts
 * const options: DynamoDbLeaseStoreOptions = { client: new DynamoDBClient({}) };
 * ```
 */
export type DynamoDbLeaseStoreOptions = DynamoDbStoreCommonOptions & DynamoDbClientOption & { transactional?: false };

/**
 * A transactional store: the handler's writes go through `ctx.tx` and commit with the record.
 *
 * @example
 * ```ts
 * const options: DynamoDbTransactionalStoreOptions = { client: new DynamoDBClient({}), transactional: true };
 * ```
 */
export type DynamoDbTransactionalStoreOptions = DynamoDbStoreCommonOptions &
  DynamoDbClientOption & {
    transactional: true;
    /**
     * How long a delivery holds its key if its process dies before it commits or rolls back (a crash):
     * then a retry may run it again. Keep it above `handlerTimeoutMs`: a lease that runs out while the
     * handler still runs lets a retry start, and the first attempt's commit is then cancelled (safe, but
     * work lost). Default 60,000.
     */
    leaseMs?: number;
    /**
     * How long the record is kept (DynamoDB's TTL deletes it after): a payment delivered again after that
     * is handled again. Longer than the sender retries and you reconcile. `Infinity` keeps records for
     * good. Default 30 days.
     */
    retainMs?: number;
  };

/**
 * What both kinds have beside their store methods.
 *
 * @example
 * ```ts
 * const store: DynamoDbStore = new DynamoDbStore({ client });
 * await store.migrate();
 * ```
 */
export interface DynamoDbStore {
  /** The table's name as given (default `service_pay_inbox`). */
  readonly tableName: string;
  /**
   * Creates the table (partition key `pk` of type S, on-demand billing) and turns TTL on (attribute
   * `ttl`), each only if missing. Idempotent; safe when several processes run it at once.
   */
  migrate(): Promise<void>;
}

/**
 * `DynamoDbStore` as a lease store.
 *
 * @example
 * ```ts
 * const store: DynamoDbLeaseStore = new DynamoDbStore({ client });
 * ```
 */
export interface DynamoDbLeaseStore extends DedupeStore, DynamoDbStore {
  readonly kind: 'lease';
  /** The operator's ledger of failing payments, kept as items of the same table. */
  readonly ledger: PaymentLedger;
}

/**
 * `DynamoDbStore` as a transactional store; `Tx` is `ctx.tx`.
 *
 * @example
 * ```ts
 * const store: DynamoDbTransactionalStore<DynamoDbTransaction> = new DynamoDbStore({ client, transactional: true });
 * ```
 */
export interface DynamoDbTransactionalStore<Tx = DynamoDbTransaction> extends TransactionalStore<Tx>, DynamoDbStore {
  readonly kind: 'transactional';
  /** The operator's ledger of failing payments, kept as items of the same table. */
  readonly ledger: PaymentLedger;
}

/**
 * How `new DynamoDbStore(...)` is typed: `transactional` picks the kind, the client option types `ctx.tx`.
 *
 * @example
 * ```ts
 * const store = new DynamoDbStore({ documentClient, transactional: true }); // ctx.tx takes plain values
 * ```
 */
export interface DynamoDbStoreConstructor {
  new (
    options: DynamoDbTransactionalStoreOptions & { documentClient: DynamoDBDocumentClient },
  ): DynamoDbTransactionalStore<DynamoDbTransaction<DocumentWrites>>;
  new (
    options: DynamoDbTransactionalStoreOptions & { client: DynamoDBClient },
  ): DynamoDbTransactionalStore<DynamoDbTransaction<LowLevelWrites>>;
  new (options: DynamoDbLeaseStoreOptions): DynamoDbLeaseStore;
  readonly prototype: DynamoDbStore;
}

const USAGE =
  'DynamoDbStore: pass { client } (an AWS SDK v3 DynamoDBClient) or { documentClient } (a DynamoDBDocumentClient), ' +
  'and transactional: true for ctx.tx.';
const DAY_MS = 24 * 60 * 60 * 1000;

interface Resolved {
  table: LeaseTable;
  document: boolean;
  stack: MiddlewareStackLike;
  /** The client (or document client) as given. */
  client: object;
}

function resolve(options: unknown): Resolved {
  if (options === null || typeof options !== 'object') throw new TypeError(USAGE);
  const { client, documentClient, tableName, autoMigrate } = options as Record<string, unknown>;
  if ((client === undefined) === (documentClient === undefined)) throw new TypeError(USAGE);
  const given = (client ?? documentClient) as { send?: unknown; middlewareStack?: { add?: unknown } } | null;
  if (typeof given?.send !== 'function' || typeof given.middlewareStack?.add !== 'function') {
    throw new TypeError(`${USAGE} Got an object without send() and middlewareStack.`);
  }
  if (autoMigrate !== undefined && typeof autoMigrate !== 'boolean') {
    throw new TypeError('DynamoDbStore: autoMigrate must be true or false.');
  }
  return {
    table: new LeaseTable(given as never, checkTableName(tableName), autoMigrate !== false),
    document: documentClient !== undefined,
    stack: given.middlewareStack as MiddlewareStackLike,
    client: given as object,
  };
}

function positive(name: string, value: unknown, fallback: number, infinite = false): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && value > 0 && (Number.isSafeInteger(value) || (infinite && value === Infinity))) {
    return value;
  }
  throw new RangeError(
    `DynamoDbStore: ${name} must be a positive integer of milliseconds${infinite ? ' or Infinity' : ''}.`,
  );
}

/** The methods both kinds share; the prototype `instanceof DynamoDbStore` checks. */
abstract class Base implements DynamoDbStore {
  protected readonly table: LeaseTable;
  /** The operator's ledger of failing payments, as items of this table (`ledger#<paymentId>`). */
  readonly ledger: DynamoDbLedger;

  constructor(resolved: Resolved) {
    this.table = resolved.table;
    this.ledger = new DynamoDbLedger(resolved.table);
  }

  get tableName(): string {
    return this.table.tableName;
  }

  migrate(): Promise<void> {
    return this.table.migrate();
  }
}

class LeaseStore extends Base implements DynamoDbLeaseStore {
  readonly kind = 'lease';

  claim(key: string, token: string, fingerprint: string, leaseMs: number): Promise<ClaimOutcome> {
    return this.table.claim(key, token, fingerprint, leaseMs);
  }

  async complete(key: string, token: string, retainMs: number, fingerprint: string): Promise<boolean> {
    const now = Date.now();
    const old = await this.table.replace(doneItem(key, token, fingerprint, now + retainMs));
    // Whatever was there is replaced (the handler has run); the answer says whether another attempt held
    // or had recorded the key. A lease or record already over counts as gone.
    return old === undefined || old.until <= now || old.token === token;
  }

  release(key: string, token: string): Promise<boolean> {
    return this.table.release(key, token);
  }

  extend(key: string, token: string, leaseMs: number): Promise<boolean> {
    return this.table.extend(key, token, leaseMs);
  }
}

class TransactionalDynamoDbStore extends Base implements DynamoDbTransactionalStore<DynamoDbTransaction> {
  readonly kind = 'transactional';
  readonly #document: boolean;
  readonly #stack: MiddlewareStackLike;
  readonly #leaseMs: number;
  readonly #retainMs: number;

  constructor(resolved: Resolved, options: DynamoDbTransactionalStoreOptions) {
    super(resolved);
    this.#document = resolved.document;
    this.#stack = resolved.stack;
    this.#leaseMs = positive('leaseMs', options.leaseMs, 60_000);
    this.#retainMs = positive('retainMs', options.retainMs, 30 * DAY_MS, true);
    guardWrites(this.#stack, this, resolved.client);
  }

  /** `draft`: the pipeline's `InboxDraft`, whose payment a late use's error names. */
  async begin(
    key: string,
    fingerprint: string,
    draft?: { readonly paymentId?: string },
  ): Promise<TransactionClaim<DynamoDbTransaction>> {
    const token = randomUUID();
    const outcome = await this.table.claim(key, token, fingerprint, this.#leaseMs);
    if (outcome.state === 'completed') return outcome;
    if (outcome.state === 'in-progress') return { state: 'in-progress', retryAfterMs: outcome.retryAfterMs };
    const session = new DynamoDbSession(
      { table: this.table, document: this.#document, retainMs: this.#retainMs, store: this },
      key,
      token,
      fingerprint,
      draft?.paymentId,
    );
    return { state: 'claimed', session: session as never };
  }
}

/**
 * A store on DynamoDB (AWS SDK v3), of either kind:
 * - `new DynamoDbStore({ client })`: a lease store. The claim is a conditional `PutItem` (the key free, or
 *   its lease over), `complete` an unconditional `PutItem` with a TTL, `extend` and `release` conditional
 *   on the token: one request each.
 * - `new DynamoDbStore({ client, transactional: true })`: the handler queues its writes on `ctx.tx` (the
 *   SDK's `Put`, `Update`, `Delete`, `ConditionCheck` shapes), and the store commits them with the record
 *   in one `TransactWriteItems` conditioned on this delivery still holding the key: all or nothing. While
 *   the handler runs, a write sent through the same client beside `ctx.tx` is refused
 *   (`WRITE_OUTSIDE_TRANSACTION`).
 *
 * The table is created on first use unless `autoMigrate: false` (then run `migrate()`, or make it by hand:
 * partition key `pk` of type S, TTL on `ttl`).
 *
 * @example
 * ```ts
 * import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
 * import { createWebhookHandler } from '@service-pay/core';
 * import { DynamoDbStore } from '@service-pay/dynamodb';
 *
 * const store = new DynamoDbStore({ client: new DynamoDBClient({}), transactional: true });
 * const handle = createWebhookHandler({ secret, store, onPaymentPaid: async (event, ctx) => {
 *   ctx.tx.update({
 *     TableName: 'orders',
 *     Key: { orderNo: { S: event.orderNo } },
 *     UpdateExpression: 'SET paid = :yes',
 *     ExpressionAttributeValues: { ':yes': { BOOL: true } },
 *   });
 * } });
 * ```
 */
export const DynamoDbStore = function DynamoDbStore(
  options: DynamoDbLeaseStoreOptions | DynamoDbTransactionalStoreOptions,
) {
  if (!new.target) throw new TypeError('DynamoDbStore is a class: call it with new.');
  const resolved = resolve(options);
  const transactional = (options as { transactional?: unknown }).transactional;
  if (transactional !== undefined && typeof transactional !== 'boolean') {
    throw new TypeError('DynamoDbStore: transactional must be true or false.');
  }
  if (transactional === true)
    return new TransactionalDynamoDbStore(resolved, options as DynamoDbTransactionalStoreOptions);
  noteLeaseStore();
  return new LeaseStore(resolved);
} as unknown as DynamoDbStoreConstructor;
(DynamoDbStore as unknown as { prototype: object }).prototype = Base.prototype;

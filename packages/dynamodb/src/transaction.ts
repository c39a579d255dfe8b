import type { ConditionCheck, Delete, Put, Update } from '@aws-sdk/client-dynamodb';
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import type { DeliveryScope } from '@service-pay/core/node';
import { DynamoDbStoreError } from './errors.js';

/** DynamoDB's most items in one `TransactWriteItems`; the dedupe record takes one of them. */
export const TRANSACT_WRITE_LIMIT = 100;

/**
 * The write shapes `ctx.tx` takes: the SDK's own `TransactWriteItems` members. `LowLevelWrites` for a
 * `DynamoDBClient` (attribute values as `{ S: 'o_1' }`), `DocumentWrites` for lib-dynamodb's
 * `DynamoDBDocumentClient` (plain values).
 *
 * @example
 * ```ts
 * const put: LowLevelWrites['put'] = { TableName: 'orders', Item: { orderNo: { S: 'o_1' } } };
 * ```
 */
export interface LowLevelWrites {
  put: Put;
  update: Update;
  delete: Delete;
  conditionCheck: ConditionCheck;
}

type DocumentItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * The document client's write shapes (see `LowLevelWrites`).
 *
 * @example
 * ```ts
 * const put: DocumentWrites['put'] = { TableName: 'orders', Item: { orderNo: 'o_1', paid: true } };
 * ```
 */
export interface DocumentWrites {
  put: NonNullable<DocumentItem['Put']>;
  update: NonNullable<DocumentItem['Update']>;
  delete: NonNullable<DocumentItem['Delete']>;
  conditionCheck: NonNullable<DocumentItem['ConditionCheck']>;
}

/**
 * `ctx.tx` of a transactional `DynamoDbStore`: the handler's writes, queued in the SDK's own shapes and
 * committed by the store in one `TransactWriteItems` with the dedupe record, conditioned on this delivery
 * still holding the key: all of them or none. Nothing is sent before the handler returns, so a handler
 * reads what was there before its own writes. At most 99 writes (the record is the 100th item).
 *
 * @example
 * ```ts
 * onPaymentPaid: async (event, ctx) => {
 *   ctx.tx.update({
 *     TableName: 'orders',
 *     Key: { orderNo: { S: event.orderNo } },
 *     UpdateExpression: 'SET paid = :yes',
 *     ConditionExpression: 'attribute_exists(orderNo)',
 *     ExpressionAttributeValues: { ':yes': { BOOL: true } },
 *   });
 * }
 * ```
 */
export interface DynamoDbTransaction<W extends LowLevelWrites | DocumentWrites = LowLevelWrites> {
  /** Queues a `Put`. */
  put(input: W['put']): void;
  /** Queues an `Update`. */
  update(input: W['update']): void;
  /** Queues a `Delete`. */
  delete(input: W['delete']): void;
  /** Queues a `ConditionCheck`: the commit happens only if it holds. */
  conditionCheck(input: W['conditionCheck']): void;
  /** How many writes are queued. */
  readonly size: number;
}

type Item = { Put?: unknown; Update?: unknown; Delete?: unknown; ConditionCheck?: unknown };

/**
 * The queue behind `ctx.tx`; the session takes its items once, at commit. A write it cannot take (past the
 * limit, not a write's shape) is thrown to the handler and recorded in the delivery's scope, so the
 * delivery fails even when the handler caught it: a credit dropped there must never commit as handled.
 */
export class QueuedTransaction implements DynamoDbTransaction<LowLevelWrites | DocumentWrites> {
  readonly #items: Item[] = [];
  #ended = false;

  constructor(private readonly scope: DeliveryScope) {}

  get size(): number {
    return this.#items.length;
  }

  put(input: unknown): void {
    this.#push({ Put: input }, 'put');
  }

  update(input: unknown): void {
    this.#push({ Update: input }, 'update');
  }

  delete(input: unknown): void {
    this.#push({ Delete: input }, 'delete');
  }

  conditionCheck(input: unknown): void {
    this.#push({ ConditionCheck: input }, 'conditionCheck');
  }

  /** Ends the queue and hands its items over; later writes are refused. */
  end(): Item[] {
    this.#ended = true;
    return this.#items;
  }

  #push(item: Item, method: string): void {
    if (this.#ended) {
      // Reported as a late use (the payment's log line, outcome and flag); work the handler left running
      // gets nothing thrown at it once the handler has returned, since nobody would catch it.
      if (this.scope.lateUse('DynamoDbStore', `ctx.tx.${method}(…)`) !== undefined) return;
      throw new DynamoDbStoreError(
        'DELIVERY_ENDED',
        `ctx.tx.${method}() after the delivery ended (committed, or rolled back at its deadline): the write is not sent.`,
      );
    }
    const input = Object.values(item)[0];
    if (
      input === null ||
      typeof input !== 'object' ||
      typeof (input as { TableName?: unknown }).TableName !== 'string'
    ) {
      throw this.#refused(
        new TypeError(`DynamoDbStore: ctx.tx.${method}() takes the SDK's ${method} input, with a TableName.`),
      );
    }
    if (this.#items.length >= TRANSACT_WRITE_LIMIT - 1) {
      throw this.#refused(
        new DynamoDbStoreError(
          'TRANSACTION_TOO_LARGE',
          `ctx.tx holds at most ${TRANSACT_WRITE_LIMIT - 1} writes: DynamoDB commits at most ${TRANSACT_WRITE_LIMIT} ` +
            'items in one TransactWriteItems, and the dedupe record is one of them. Nothing was sent; the delivery fails ' +
            'and is not recorded. Write fewer items per payment (an aggregate item, or the lines in one item).',
        ),
      );
    }
    this.#items.push(item);
  }

  #refused(error: Error): Error {
    void this.scope.refuse(error);
    return error;
  }
}

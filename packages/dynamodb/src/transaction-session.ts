import { TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import type { InboxRecord, TransactionSession } from '@service-pay/core';
import { asStoreWork, type DeliveryScope, openDelivery } from '@service-pay/core/node';
import { explainCommitFailure } from './cancellation.js';
import { DynamoDbStoreError } from './errors.js';
import type { LeaseTable } from './lease-table.js';
import { ATTR, doneItem, type NativeItem, STILL_OURS, toAttributes } from './record-item.js';
import { QueuedTransaction } from './transaction.js';

type LibDynamoDb = typeof import('@aws-sdk/lib-dynamodb');
let libDynamoDb: Promise<LibDynamoDb> | undefined;
/** lib-dynamodb is loaded only by stores given a document client: the others never need it installed. */
const loadLibDynamoDb = (): Promise<LibDynamoDb> => {
  libDynamoDb ??= import('@aws-sdk/lib-dynamodb');
  return libDynamoDb;
};

/** How the session's commit speaks to DynamoDB: the client's own shapes for the handler's writes. */
export interface SessionSettings {
  table: LeaseTable;
  document: boolean;
  retainMs: number;
  /** The store, as its client's write guard knows it (`guardWrites`). */
  store: object;
}

/**
 * One delivery holding its key by a lease: the handler queues its writes on `tx`, and `commit` sends them
 * with the record in one `TransactWriteItems` conditioned on the lease still being this delivery's. Its
 * scope records what was refused meanwhile (a write sent through the store's client, a write `tx` could
 * not take): any refusal fails the commit, whether the handler caught it or not.
 */
export class DynamoDbSession implements TransactionSession<QueuedTransaction> {
  readonly tx: QueuedTransaction;
  readonly scope: DeliveryScope;
  #ended = false;

  constructor(
    private readonly settings: SessionSettings,
    private readonly key: string,
    private readonly token: string,
    private readonly fingerprint: string,
    paymentId: string | undefined,
  ) {
    this.scope = openDelivery(settings.store, paymentId);
    this.tx = new QueuedTransaction(this.scope);
  }

  async commit(record: InboxRecord): Promise<void> {
    if (this.#ended) throw new DynamoDbStoreError('DELIVERY_ENDED', 'commit after the delivery ended.');
    const holding = this.scope.settled();
    if (holding !== undefined) await holding;
    const refused = this.scope.end();
    const writes = this.tx.end();
    if (refused !== undefined) {
      // A refusal the handler caught, or never awaited, still fails the delivery: nothing is recorded and
      // the sender's retry runs it again.
      await this.rollback(refused);
      throw refused;
    }
    const item = doneItem(this.key, this.token, this.fingerprint, Date.now() + this.settings.retainMs, {
      outcome: record.outcome,
      paymentId: record.paymentId,
      deliveryId: record.deliveryId,
      source: record.source,
      reason: record.reason,
      at: new Date().toISOString(),
    });
    // A rejection drops the handler's writes and records only itself; a credit without writes needs no
    // transaction either: one conditional PutItem, half the write units of a TransactWriteItems.
    if (record.outcome === 'rejected' || writes.length === 0) {
      if (!(await this.settings.table.replaceIfOurs(item, this.token))) {
        throw new DynamoDbStoreError(
          'LEASE_LOST',
          'another attempt took the key while this one ran: nothing was recorded.',
        );
      }
    } else {
      try {
        await this.#transactWrite(writes, item);
      } catch (error) {
        throw explainCommitFailure(error, writes.length);
      }
    }
    this.#ended = true;
  }

  async rollback(_reason: unknown): Promise<void> {
    this.tx.end();
    this.scope.end();
    if (this.#ended) return;
    this.#ended = true;
    // Frees the key at once. Conditioned on the lease only, not on its clock: after a commit whose answer
    // was lost, the item is the record, and stays.
    await this.settings.table.release(this.key, this.token, false);
  }

  async #transactWrite(writes: object[], item: NativeItem): Promise<void> {
    const { table } = this.settings;
    const condition = {
      TableName: table.tableName,
      ConditionExpression: STILL_OURS,
      ExpressionAttributeNames: { '#st': ATTR.state, '#tok': ATTR.token },
    };
    if (this.settings.document) {
      const { TransactWriteCommand } = await loadLibDynamoDb();
      const record = {
        Put: { ...condition, Item: item, ExpressionAttributeValues: { ':lease': 'lease', ':tok': this.token } },
      };
      await asStoreWork(() =>
        table.client.send(new TransactWriteCommand({ TransactItems: [...writes, record] as never })),
      );
      return;
    }
    const record = {
      Put: {
        ...condition,
        Item: toAttributes(item),
        ExpressionAttributeValues: { ':lease': { S: 'lease' }, ':tok': { S: this.token } },
      },
    };
    await asStoreWork(() =>
      table.client.send(new TransactWriteItemsCommand({ TransactItems: [...writes, record] as never })),
    );
  }
}

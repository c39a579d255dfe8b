import { DeleteItemCommand, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { ClaimOutcome } from '@service-pay/core';
import { asStoreWork } from '@service-pay/core/node';
import {
  ATTR,
  CLAIMABLE,
  HELD_BY_TOKEN,
  leaseItem,
  NAMES,
  type NativeItem,
  readItem,
  STILL_OURS,
  type StoredItem,
  toAttributes,
} from './record-item.js';
import { createTable, isTableMissing, type Sender, tableMissing } from './table.js';

const isConditionFailed = (error: unknown): boolean =>
  (error as { name?: string } | null)?.name === 'ConditionalCheckFailedException';

/**
 * The store's requests on its table, one round trip each: the lease (claim, extend, release) and the
 * record. Both kinds of store use it. Creates the table on the first request that finds it missing, when
 * allowed to.
 */
export class LeaseTable {
  #creating: Promise<void> | undefined;

  constructor(
    readonly client: Sender,
    readonly tableName: string,
    private readonly autoMigrate: boolean,
  ) {}

  /** Creates the table if missing (`migrate()`); concurrent callers share one attempt. */
  migrate(): Promise<void> {
    if (this.#creating === undefined) {
      this.#creating = createTable(this.client, this.tableName).catch((error: unknown) => {
        this.#creating = undefined;
        throw error;
      });
    }
    return this.#creating;
  }

  /** Sends one of the store's requests; a missing table is created (once) and the request sent again. */
  async send<T>(command: unknown): Promise<T> {
    try {
      return await asStoreWork(() => this.client.send(command));
    } catch (error) {
      if (!isTableMissing(error)) throw error;
      if (!this.autoMigrate) throw tableMissing(this.tableName, error);
      await this.migrate();
      return asStoreWork(() => this.client.send(command));
    }
  }

  /** A conditional PutItem: the key free, or its lease or record over. Else what holds it, from the same request. */
  async claim(key: string, token: string, fingerprint: string, leaseMs: number): Promise<ClaimOutcome> {
    const now = Date.now();
    try {
      await this.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: toAttributes(leaseItem(key, token, fingerprint, now + leaseMs)),
          ConditionExpression: CLAIMABLE,
          ExpressionAttributeNames: { '#until': ATTR.until },
          ExpressionAttributeValues: { ':now': { N: String(now) } },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { state: 'claimed' };
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
      const found = readItem((error as { Item?: Parameters<typeof readItem>[0] }).Item) ?? (await this.#read(key));
      return holding(found, now, leaseMs);
    }
  }

  /** Rare: a DynamoDB that does not return the item with a failed condition. A consistent read then. */
  async #read(key: string): Promise<StoredItem | undefined> {
    const { Item } = await this.send<{ Item?: Parameters<typeof readItem>[0] }>(
      new GetItemCommand({ TableName: this.tableName, Key: { pk: { S: key } }, ConsistentRead: true }),
    );
    return readItem(Item);
  }

  /** An unconditional PutItem of `item`, answering what it replaced. */
  async replace(item: NativeItem): Promise<StoredItem | undefined> {
    const { Attributes } = await this.send<{ Attributes?: Parameters<typeof readItem>[0] }>(
      new PutItemCommand({ TableName: this.tableName, Item: toAttributes(item), ReturnValues: 'ALL_OLD' }),
    );
    return readItem(Attributes);
  }

  /** A PutItem of `item` conditioned on `token` still holding the key's lease: `false` if it does not. */
  async replaceIfOurs(item: NativeItem, token: string): Promise<boolean> {
    try {
      await this.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: toAttributes(item),
          ConditionExpression: STILL_OURS,
          ExpressionAttributeNames: { '#st': ATTR.state, '#tok': ATTR.token },
          ExpressionAttributeValues: { ':lease': { S: 'lease' }, ':tok': { S: token } },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailed(error)) return false;
      throw error;
    }
  }

  async extend(key: string, token: string, leaseMs: number): Promise<boolean> {
    const now = Date.now();
    const until = now + leaseMs;
    try {
      await this.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: { S: key } },
          UpdateExpression: 'SET #until = :until, #ttl = :ttl',
          ConditionExpression: HELD_BY_TOKEN,
          ExpressionAttributeNames: { ...NAMES, '#ttl': ATTR.ttl },
          ExpressionAttributeValues: {
            ':lease': { S: 'lease' },
            ':tok': { S: token },
            ':now': { N: String(now) },
            ':until': { N: String(until) },
            ':ttl': { N: String(Math.ceil(until / 1000)) },
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailed(error)) return false;
      throw error;
    }
  }

  /** Deletes the lease if `token` holds it; `live` also asks that it has not run out. */
  async release(key: string, token: string, live = true): Promise<boolean> {
    try {
      await this.send(
        new DeleteItemCommand({
          TableName: this.tableName,
          Key: { pk: { S: key } },
          ConditionExpression: live ? HELD_BY_TOKEN : STILL_OURS,
          ExpressionAttributeNames: live ? NAMES : { '#st': ATTR.state, '#tok': ATTR.token },
          ExpressionAttributeValues: {
            ':lease': { S: 'lease' },
            ':tok': { S: token },
            ...(live ? { ':now': { N: String(Date.now()) } } : {}),
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailed(error)) return false;
      throw error;
    }
  }
}

/** What a claim that lost its condition found: a live lease (in progress) or a live record (completed). */
function holding(found: StoredItem | undefined, now: number, leaseMs: number): ClaimOutcome {
  if (found?.state === 'done') return { state: 'completed', fingerprint: found.fingerprint ?? '' };
  // Gone between the condition and the read (released, or swept by TTL): the key is free; the sender's
  // retry a moment later claims it.
  const left = found === undefined ? 1 : Math.min(Math.max(found.until - now, 1), Math.max(leaseMs, 1));
  return { state: 'in-progress', fingerprint: found?.fingerprint ?? '', retryAfterMs: left };
}

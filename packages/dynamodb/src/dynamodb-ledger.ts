import { type AttributeValue, GetItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import {
  type AttemptSource,
  type LedgerCounts,
  type LedgerEntry,
  type LedgerFailure,
  type LedgerFlagReason,
  type LedgerPage,
  type LedgerPayment,
  ledgerFlagError,
  type PaymentLedger,
  pageLimit,
} from '@service-pay/core';
import type { LeaseTable } from './lease-table.js';

type Item = Record<string, AttributeValue>;

/** The ledger's items share the store's table under keys of their own, which no dedupe key can take. */
const PREFIX = 'ledger#';
/** Items read per Scan request while a page is gathered. */
const SCAN_BATCH = 1_000;

/**
 * `DynamoDbStore`'s ledger: one item per payment in the store's own table (`pk` = `ledger#<paymentId>`,
 * no TTL), so nothing else is created. A failure is one `UpdateItem` (attempts counted with `ADD`), a close
 * one conditional `UpdateItem`. Without an index, a page is gathered with `Scan` (filtered on the open
 * flag), so it reads the table's dedupe records too; pages come in the table's order, each sorted by the
 * latest failure. A table with millions of records and an operator who reads often wants a GSI on
 * (`lopen`, `last_failed_at`): add it yourself, the items carry both.
 *
 * @example
 * ```ts
 * const page = await new DynamoDbStore({ client }).ledger.failing({ limit: 20 });
 * ```
 */
export class DynamoDbLedger implements PaymentLedger {
  constructor(private readonly table: LeaseTable) {}

  async recordFailure(f: LedgerFailure): Promise<number> {
    const answer = await this.table.send<{ Attributes?: Item }>(
      new UpdateItemCommand({
        TableName: this.table.tableName,
        Key: { pk: { S: PREFIX + f.paymentId } },
        UpdateExpression:
          'ADD attempts :one SET payment_id = :id, order_no = :o, amount = :a, token_symbol = :t, dedupe_key = :k, ' +
          'first_failed_at = if_not_exists(first_failed_at, :at), last_failed_at = :at, last_error_code = :c, ' +
          'last_error_message = :m, lopen = :one REMOVE closed_by, closed_at',
        ExpressionAttributeValues: {
          ':one': { N: '1' },
          ':id': { S: f.paymentId },
          ':o': { S: f.orderNo },
          ':a': { S: f.amount },
          ':t': { S: f.tokenSymbol },
          ':k': { S: f.key },
          ':at': { N: String(f.at) },
          ':c': { S: f.code },
          ':m': { S: f.message },
        },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(answer.Attributes?.attempts?.N ?? 0);
  }

  async close(paymentId: string, closedBy: AttemptSource, at = Date.now()): Promise<boolean> {
    try {
      await this.table.send(
        new UpdateItemCommand({
          TableName: this.table.tableName,
          Key: { pk: { S: PREFIX + paymentId } },
          UpdateExpression: 'SET closed_by = :by, closed_at = :at, lopen = :zero',
          ConditionExpression:
            'attribute_exists(pk) AND attribute_not_exists(closed_by) AND attribute_not_exists(flag)',
          ExpressionAttributeValues: { ':by': { S: closedBy }, ':at': { N: String(at) }, ':zero': { N: '0' } },
        }),
      );
      return true;
    } catch (error) {
      if ((error as { name?: string }).name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }

  async flag(
    paymentId: string,
    reason: LedgerFlagReason,
    d: Partial<LedgerPayment> & { message?: string; at?: number } = {},
  ): Promise<void> {
    const { code, message } = ledgerFlagError(reason, d.message);
    await this.table.send(
      new UpdateItemCommand({
        TableName: this.table.tableName,
        Key: { pk: { S: PREFIX + paymentId } },
        UpdateExpression:
          'SET payment_id = :id, flag = :r, lopen = :one, last_failed_at = :at, last_error_code = :c, last_error_message = :m, ' +
          'order_no = if_not_exists(order_no, :o), amount = if_not_exists(amount, :a), token_symbol = if_not_exists(token_symbol, :t), ' +
          'dedupe_key = if_not_exists(dedupe_key, :k), attempts = if_not_exists(attempts, :zero), first_failed_at = if_not_exists(first_failed_at, :zero)',
        ExpressionAttributeValues: {
          ':id': { S: paymentId },
          ':r': { S: reason },
          ':one': { N: '1' },
          ':zero': { N: '0' },
          ':at': { N: String(d.at ?? Date.now()) },
          ':c': { S: code },
          ':m': { S: message },
          ':o': { S: d.orderNo ?? '' },
          ':a': { S: d.amount ?? '' },
          ':t': { S: d.tokenSymbol ?? '' },
          ':k': { S: d.key ?? '' },
        },
      }),
    );
  }

  async failing(options: { limit?: number; cursor?: string } = {}): Promise<LedgerPage> {
    const limit = pageLimit(options.limit);
    const at = cursorOf(options.cursor);
    // A stretch of the table is the scan requests from `start`: as many as the first page of it took (or,
    // for a new stretch, until more than a page was found), read again for each of its pages, so every
    // page of a stretch sorts the same entries.
    const found: LedgerEntry[] = [];
    let next: Item | undefined = at.start;
    let requests = 0;
    for (;;) {
      const answer: { Items?: Item[]; LastEvaluatedKey?: Item } = await this.table.send(
        new ScanCommand({
          TableName: this.table.tableName,
          FilterExpression: 'begins_with(pk, :p) AND lopen = :one',
          ExpressionAttributeValues: { ':p': { S: PREFIX }, ':one': { N: '1' } },
          Limit: SCAN_BATCH,
          ...(next === undefined ? {} : { ExclusiveStartKey: next }),
        }),
      );
      requests++;
      for (const item of answer.Items ?? []) found.push(entryOf(item));
      next = answer.LastEvaluatedKey;
      if (next === undefined) break;
      if (at.requests > 0 ? requests >= at.requests : found.length > at.skip + limit) break;
    }
    found.sort((a, b) => b.lastFailedAt - a.lastFailedAt || (b.paymentId < a.paymentId ? -1 : 1));
    const entries = found.slice(at.skip, at.skip + limit);
    if (found.length > at.skip + limit) {
      return { entries, next: cursorText({ start: at.start, requests, skip: at.skip + limit }) };
    }
    return next === undefined ? { entries } : { entries, next: cursorText({ start: next, requests: 0, skip: 0 }) };
  }

  async story(paymentId: string): Promise<LedgerEntry | undefined> {
    const answer = await this.table.send<{ Item?: Item }>(
      new GetItemCommand({
        TableName: this.table.tableName,
        Key: { pk: { S: PREFIX + paymentId } },
        ConsistentRead: true,
      }),
    );
    return answer.Item === undefined ? undefined : entryOf(answer.Item);
  }

  async counts(): Promise<LedgerCounts> {
    const counts: LedgerCounts = { failing: 0, flagged: 0, closed: 0 };
    let start: Item | undefined;
    do {
      const answer = await this.table.send<{ Items?: Item[]; LastEvaluatedKey?: Item }>(
        new ScanCommand({
          TableName: this.table.tableName,
          FilterExpression: 'begins_with(pk, :p)',
          ProjectionExpression: 'flag, closed_by',
          ExpressionAttributeValues: { ':p': { S: PREFIX } },
          ...(start === undefined ? {} : { ExclusiveStartKey: start }),
        }),
      );
      for (const item of answer.Items ?? []) {
        counts[item.flag !== undefined ? 'flagged' : item.closed_by !== undefined ? 'closed' : 'failing']++;
      }
      start = answer.LastEvaluatedKey;
    } while (start !== undefined);
    return counts;
  }
}

interface ScanCursor {
  start: Item | undefined;
  requests: number;
  skip: number;
}

function cursorText(cursor: ScanCursor): string {
  return `d~${Buffer.from(JSON.stringify(cursor)).toString('base64url')}`;
}

function cursorOf(text: string | undefined): ScanCursor {
  if (text === undefined) return { start: undefined, requests: 0, skip: 0 };
  const refused = new TypeError('ledger: cursor is not one a page of the ledger gave.');
  if (!/^d~[A-Za-z0-9_-]{1,4000}$/.test(text)) throw refused;
  let parsed: Partial<ScanCursor>;
  try {
    parsed = JSON.parse(Buffer.from(text.slice(2), 'base64url').toString('utf8')) as Partial<ScanCursor>;
  } catch {
    throw refused;
  }
  const { start, requests, skip } = parsed;
  const startOk =
    start === undefined || (typeof start === 'object' && start !== null && typeof start.pk?.S === 'string');
  if (!startOk || !Number.isSafeInteger(requests) || !Number.isSafeInteger(skip)) throw refused;
  return {
    start: start === undefined ? undefined : { pk: { S: start.pk?.S as string } },
    requests: requests as number,
    skip: skip as number,
  };
}

function entryOf(item: Item): LedgerEntry {
  const s = (name: string) => item[name]?.S ?? '';
  const n = (name: string) => Number(item[name]?.N ?? 0);
  const flag = item.flag?.S as LedgerFlagReason | undefined;
  const closedBy = item.closed_by?.S as AttemptSource | undefined;
  const entry: LedgerEntry = {
    paymentId: s('payment_id'),
    orderNo: s('order_no'),
    amount: s('amount'),
    tokenSymbol: s('token_symbol'),
    key: s('dedupe_key'),
    state: flag !== undefined ? 'flagged' : closedBy !== undefined ? 'closed' : 'failing',
    attempts: n('attempts'),
    firstFailedAt: n('first_failed_at'),
    lastFailedAt: n('last_failed_at'),
    lastError: { code: s('last_error_code'), message: s('last_error_message') },
  };
  if (flag !== undefined) entry.flag = flag;
  if (closedBy !== undefined) {
    entry.closedBy = closedBy;
    entry.closedAt = n('closed_at');
  }
  return entry;
}

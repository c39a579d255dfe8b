import { randomUUID } from 'node:crypto';
import {
  BatchWriteItemCommand,
  ExecuteStatementCommand,
  GetItemCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { type PaymentPaidEvent, PaymentRejectedError, type WebhookRequestHandler } from '@service-pay/core';
import { samplePaymentPaidEvent, sendSigned, storeHandler } from '@service-pay/core/testing';
import {
  DynamoDbStore,
  DynamoDbStoreError,
  type DynamoDbTransaction,
  type DynamoDbTransactionalStore,
  TRANSACT_WRITE_LIMIT,
  WriteOutsideTransactionError,
} from '@service-pay/dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { emulatorClient, emulatorDocumentClient, uniqueTable } from './support/clients.js';
import { countRequests } from './support/request-counter.js';
import { countItems, createPkSkTable } from './support/tables.js';

const SECRET = 'whsec_dynamodb_store_tests_0123456789abcdef';
const quiet = { warn: () => {}, error: () => {} };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const endpoint = inject('dynamodbEndpoint');
const inbox = uniqueTable('store_inbox');
const credits = uniqueTable('store_credits');

const send = (handle: WebhookRequestHandler, event: PaymentPaidEvent) => sendSigned(handle, event, SECRET);
const event = () => samplePaymentPaidEvent({ paymentId: `p_${randomUUID()}` });
const creditPut = (paymentId: string) => ({
  TableName: credits,
  Item: { pk: { S: paymentId }, sk: { S: randomUUID() } },
});

describe('DynamoDbStore (transactional) behind the webhook handler', () => {
  const client = emulatorClient(endpoint);
  let store: DynamoDbTransactionalStore<DynamoDbTransaction>;
  const handler = (
    onPaymentPaid: (event: PaymentPaidEvent, tx: DynamoDbTransaction) => Promise<void>,
    handlerTimeoutMs?: number,
  ) => storeHandler({ store, secret: SECRET, logger: quiet, handlerTimeoutMs }, onPaymentPaid);
  const credited = (paymentId: string) => countItems(client, credits, paymentId);
  const record = async (paymentId: string) =>
    (
      await client.send(
        new GetItemCommand({ TableName: inbox, Key: { pk: { S: `payment.paid:${paymentId}` } }, ConsistentRead: true }),
      )
    ).Item;

  beforeAll(async () => {
    store = new DynamoDbStore({ client, tableName: inbox, transactional: true });
    await store.migrate();
    await store.migrate(); // idempotent
    await createPkSkTable(client, credits);
  });

  it('credits once: a first attempt that queues the credit then throws writes nothing, the retry credits, a duplicate does not', async () => {
    const paid = event();
    let attempts = 0;
    const handle = handler(async (e, tx) => {
      tx.put(creditPut(e.paymentId));
      if (++attempts === 1) throw new Error('after the credit');
    });
    expect((await send(handle, paid)).status).toBe(500);
    expect(await credited(paid.paymentId)).toBe(0);
    expect(await record(paid.paymentId)).toBeUndefined();
    expect((await send(handle, paid)).status).toBe(200);
    const duplicate = await send(handle, paid);
    expect(JSON.parse(duplicate.body)).toEqual({ received: true, duplicate: true });
    expect(await credited(paid.paymentId)).toBe(1);
    expect(attempts).toBe(2);
    expect(await record(paid.paymentId)).toMatchObject({
      st: { S: 'done' },
      outcome: { S: 'credited' },
      paymentId: { S: paid.paymentId },
      source: { S: 'webhook' },
    });
  });

  it('PaymentRejectedError: the queued writes are dropped and the rejection is recorded', async () => {
    const paid = event();
    const handle = handler(async (e, tx) => {
      tx.put(creditPut(e.paymentId));
      throw new PaymentRejectedError('amount below the order total');
    });
    const answer = await send(handle, paid);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ received: true, rejected: true });
    expect(await credited(paid.paymentId)).toBe(0);
    expect(await record(paid.paymentId)).toMatchObject({
      outcome: { S: 'rejected' },
      reason: { S: 'amount below the order total' },
    });
    expect((await send(handle, paid)).status).toBe(200);
    expect(await credited(paid.paymentId)).toBe(0);
  });

  it(`${TRANSACT_WRITE_LIMIT - 1} writes commit with the record; one more is refused before anything is sent`, async () => {
    const counter = countRequests(client);
    const fits = event();
    const handleFits = handler(async (e, tx) => {
      for (let i = 0; i < TRANSACT_WRITE_LIMIT - 1; i++) tx.put(creditPut(e.paymentId));
    });
    expect((await send(handleFits, fits)).status).toBe(200);
    expect(await credited(fits.paymentId)).toBe(TRANSACT_WRITE_LIMIT - 1);

    const tooMany = event();
    let refused: unknown;
    const handleTooMany = handler(async (e, tx) => {
      try {
        for (let i = 0; i < TRANSACT_WRITE_LIMIT; i++) tx.put(creditPut(e.paymentId));
      } catch (error) {
        refused = error;
        throw error;
      }
    });
    counter.reset();
    expect((await send(handleTooMany, tooMany)).status).toBe(500);
    expect(refused).toBeInstanceOf(DynamoDbStoreError);
    expect((refused as DynamoDbStoreError).code).toBe('TRANSACTION_TOO_LARGE');
    expect((refused as Error).message).toMatch(/at most 99 writes/);
    expect(counter.byCommand.get('TransactWriteItemsCommand') ?? 0).toBe(0);
    expect(await credited(tooMany.paymentId)).toBe(0);
    expect(await record(tooMany.paymentId)).toBeUndefined();
  });

  it("a write through the store's client beside ctx.tx is refused (PutItem, UpdateItem, a document client's PutCommand, BatchWriteItem, TransactWriteItems, a PartiQL INSERT), caught refusals still fail the delivery; reads pass; the guard ends with the delivery", async () => {
    const documentClient = emulatorDocumentClient(endpoint);
    // The document client made from the store's client shares its middleware stack: guarded as well.
    const sameStack = (await import('@aws-sdk/lib-dynamodb')).DynamoDBDocumentClient.from(client);
    const paid = event();
    const refusals: unknown[] = [];
    let background: Promise<unknown> | undefined;
    let attempts = 0;
    const handle = handler(async (e, tx) => {
      if (++attempts > 1) {
        tx.put(creditPut(e.paymentId));
        return;
      }
      await client.send(new GetItemCommand({ TableName: credits, Key: { pk: { S: 'x' }, sk: { S: 'y' } } }));
      await client.send(
        new ExecuteStatementCommand({ Statement: `SELECT * FROM "${credits}" WHERE pk = ?`, Parameters: [{ S: 'x' }] }),
      );
      for (const write of [
        () => client.send(new PutItemCommand(creditPut(e.paymentId))),
        () =>
          client.send(
            new UpdateItemCommand({
              TableName: credits,
              Key: { pk: { S: e.paymentId }, sk: { S: 'u' } },
              UpdateExpression: 'SET n = :n',
              ExpressionAttributeValues: { ':n': { N: '1' } },
            }),
          ),
        () => sameStack.send(new PutCommand({ TableName: credits, Item: { pk: e.paymentId, sk: randomUUID() } })),
        () =>
          client.send(
            new BatchWriteItemCommand({
              RequestItems: { [credits]: [{ PutRequest: { Item: creditPut(e.paymentId).Item } }] },
            }),
          ),
        () => client.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: creditPut(e.paymentId) }] })),
        () =>
          client.send(
            new ExecuteStatementCommand({
              Statement: `INSERT INTO "${credits}" VALUE {'pk': ?, 'sk': ?}`,
              Parameters: [{ S: e.paymentId }, { S: randomUUID() }],
            }),
          ),
      ]) {
        refusals.push(
          await write().then(
            () => 'sent',
            (error: unknown) => error,
          ),
        );
      }
      // Another client instance is not the store's: its writes are the app's business.
      await documentClient.send(new PutCommand({ TableName: credits, Item: { pk: `${e.paymentId}:other`, sk: 'o' } }));
      // Background work that outlives the delivery writes freely once the delivery is over.
      background = sleep(300).then(() => client.send(new PutItemCommand(creditPut(`${e.paymentId}:later`))));
      tx.put(creditPut(e.paymentId));
    });
    // Every refusal was caught, yet the delivery fails: nothing recorded, the retry runs it again.
    const failed = await send(handle, paid);
    expect(failed.status).toBe(500);
    expect(JSON.parse(failed.body).error).toBe('HANDLER_FAILED');
    expect(await credited(paid.paymentId)).toBe(0);
    expect(await record(paid.paymentId)).toBeUndefined();
    expect((await send(handle, paid)).status).toBe(200);
    expect(refusals).toHaveLength(6);
    for (const refusal of refusals) {
      expect(refusal).toBeInstanceOf(WriteOutsideTransactionError);
      expect((refusal as WriteOutsideTransactionError).code).toBe('WRITE_OUTSIDE_TRANSACTION');
      expect((refusal as Error).message).toMatch(/ctx\.tx/);
    }
    expect(await credited(paid.paymentId)).toBe(1);
    expect(await countItems(client, credits, `${paid.paymentId}:other`)).toBe(1);
    await background;
    expect(await countItems(client, credits, `${paid.paymentId}:later`)).toBe(1);
    // Outside any delivery the client writes as usual.
    await client.send(new PutItemCommand(creditPut(`${paid.paymentId}:outside`)));
  });

  it('a handler past its deadline: its late writes are refused (DELIVERY_ENDED), nothing commits, the retry credits once', async () => {
    const paid = event();
    let late: unknown;
    let attempts = 0;
    const handle = handler(async (e, tx) => {
      if (++attempts === 1) {
        await sleep(400);
        try {
          tx.put(creditPut(e.paymentId));
        } catch (error) {
          late = error;
        }
        return;
      }
      tx.put(creditPut(e.paymentId));
    }, 150);
    expect((await send(handle, paid)).status).toBe(500);
    await sleep(400);
    expect((late as DynamoDbStoreError).code).toBe('DELIVERY_ENDED');
    expect(await credited(paid.paymentId)).toBe(0);
    expect((await send(handle, paid)).status).toBe(200);
    expect(await credited(paid.paymentId)).toBe(1);
  });

  it('a fresh delivery costs 2 requests (claim, TransactWriteItems), a duplicate 1, a credit-less one 2 PutItems', async () => {
    const counter = countRequests(client);
    const paid = event();
    const handle = handler(async (e, tx) => {
      tx.put(creditPut(e.paymentId));
    });
    counter.reset();
    expect((await send(handle, paid)).status).toBe(200);
    expect(Object.fromEntries(counter.byCommand)).toEqual({ PutItemCommand: 1, TransactWriteItemsCommand: 1 });
    counter.reset();
    expect((await send(handle, paid)).status).toBe(200);
    expect(Object.fromEntries(counter.byCommand)).toEqual({ PutItemCommand: 1 });
    counter.reset();
    expect(
      (
        await send(
          handler(async () => {}),
          event(),
        )
      ).status,
    ).toBe(200);
    expect(Object.fromEntries(counter.byCommand)).toEqual({ PutItemCommand: 2 });
  });
});

describe('DynamoDbStore (transactional): commit failures, coded', () => {
  const client = emulatorClient(endpoint);
  const table = uniqueTable('store_commit');
  const marks = uniqueTable('store_marks');
  const record = { outcome: 'credited' as const, paymentId: 'p_1', deliveryId: 'dl_1', source: 'webhook' as const };

  beforeAll(async () => {
    await createPkSkTable(client, marks);
  });
  /** A fresh key claimed on a transactional store, and how its commit fails after `write` queued its writes. */
  const commitFailure = async (write: (tx: DynamoDbTransaction, key: string) => void) => {
    const store = new DynamoDbStore({ client, tableName: table, transactional: true });
    const key = `k_${randomUUID()}`;
    const claim = await store.begin(key, 'fp');
    if (claim.state !== 'claimed') throw new Error('expected claimed');
    write(claim.session.tx, key);
    const error = await claim.session.commit(record).then(
      () => undefined,
      (e: unknown) => e,
    );
    await claim.session.rollback(error);
    return { store, key, error: error as DynamoDbStoreError };
  };

  it('a lease lost while the handler ran cancels the whole transaction (LEASE_LOST); the new holder commits', async () => {
    const store = new DynamoDbStore({ client, tableName: table, transactional: true, leaseMs: 150 });
    const key = `k_${randomUUID()}`;
    const first = await store.begin(key, 'fp');
    if (first.state !== 'claimed') throw new Error('expected claimed');
    first.session.tx.put({ TableName: marks, Item: { pk: { S: key }, sk: { S: 'first' } } });
    await sleep(250);
    const second = await store.begin(key, 'fp');
    if (second.state !== 'claimed') throw new Error('expected the run-out lease to be claimable');
    const error = await first.session.commit(record).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DynamoDbStoreError);
    expect((error as DynamoDbStoreError).code).toBe('LEASE_LOST');
    expect((error as DynamoDbStoreError).reasons).toEqual([
      expect.objectContaining({ index: 1, code: 'ConditionalCheckFailed' }),
    ]);
    await first.session.rollback(error); // the pipeline does: it must not free the new holder's key
    expect(await countItems(client, marks, key)).toBe(0);
    second.session.tx.put({ TableName: marks, Item: { pk: { S: key }, sk: { S: 'second' } } });
    await second.session.commit(record);
    expect(await countItems(client, marks, key)).toBe(1);
    expect((await store.begin(key, 'fp')).state).toBe('completed');
  });

  it("a failed condition of the handler's own write: TRANSACTION_CONDITION_FAILED, nothing written, the key free", async () => {
    const { store, key, error } = await commitFailure((tx, key) => {
      tx.put({ TableName: marks, Item: { pk: { S: key }, sk: { S: 'a' } } });
      tx.conditionCheck({
        TableName: marks,
        Key: { pk: { S: key }, sk: { S: 'absent' } },
        ConditionExpression: 'attribute_exists(pk)',
      });
    });
    expect(error.code).toBe('TRANSACTION_CONDITION_FAILED');
    expect(error.reasons).toEqual([expect.objectContaining({ index: 1, code: 'ConditionalCheckFailed' })]);
    expect(await countItems(client, marks, key)).toBe(0);
    expect((await store.begin(key, 'fp')).state).toBe('claimed');
  });

  it('two writes to one item: TRANSACTION_INVALID, nothing written', async () => {
    const { key, error } = await commitFailure((tx, key) => {
      tx.put({ TableName: marks, Item: { pk: { S: key }, sk: { S: 'same' } } });
      tx.put({ TableName: marks, Item: { pk: { S: key }, sk: { S: 'same' } } });
    });
    expect(error.code).toBe('TRANSACTION_INVALID');
    expect(await countItems(client, marks, key)).toBe(0);
  });
});

describe('DynamoDbStore: its table', () => {
  const client = emulatorClient(endpoint);

  it('is created on first use (autoMigrate), with TTL on', async () => {
    const tableName = uniqueTable('store_auto');
    const store = new DynamoDbStore({ client, tableName });
    expect(await store.claim('k', 't', 'fp', 10_000)).toEqual({ state: 'claimed' });
    const { DescribeTimeToLiveCommand } = await import('@aws-sdk/client-dynamodb');
    const ttl = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    expect(ttl.TimeToLiveDescription).toMatchObject({ AttributeName: 'ttl', TimeToLiveStatus: 'ENABLED' });
    // Many stores meeting a missing table at once each succeed.
    const many = uniqueTable('store_auto_many');
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        new DynamoDbStore({ client, tableName: many }).claim(`k${i}`, 't', 'fp', 10_000),
      ),
    );
    expect(outcomes.every((o) => o.state === 'claimed')).toBe(true);
  });

  it('autoMigrate: false answers TABLE_MISSING and creates nothing', async () => {
    const tableName = uniqueTable('store_nomig');
    const store = new DynamoDbStore({ client, tableName, transactional: true, autoMigrate: false });
    const error = await store.begin('k', 'fp').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as DynamoDbStoreError).code).toBe('TABLE_MISSING');
    expect((error as Error).message).toMatch(/migrate\(\)/);
    const again = await store.begin('k', 'fp').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((again as DynamoDbStoreError).code).toBe('TABLE_MISSING');
  });

  it('CreateTable denied: TABLE_MISSING naming the permissions', async () => {
    // DynamoDB Local checks no IAM; the denial is the one branch answered here by a middleware step.
    const denied = emulatorClient(endpoint);
    denied.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'CreateTableCommand') {
          throw Object.assign(new Error('not authorized to perform: dynamodb:CreateTable'), {
            name: 'AccessDeniedException',
          });
        }
        return next(args);
      },
      { step: 'initialize', name: 'denyCreateTable' },
    );
    const store = new DynamoDbStore({ client: denied, tableName: uniqueTable('store_denied') });
    const error = await store.claim('k', 't', 'fp', 10_000).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((error as DynamoDbStoreError).code).toBe('TABLE_MISSING');
    expect((error as Error).message).toMatch(/dynamodb:CreateTable/);
  });

  it('lease store: one request per call', async () => {
    const tableName = uniqueTable('store_rt');
    const store = new DynamoDbStore({ client, tableName });
    await store.migrate();
    const counter = countRequests(client);
    counter.reset();
    await store.claim('k', 't', 'fp', 10_000);
    await store.extend('k', 't', 10_000);
    await store.claim('k', 'u', 'fp', 10_000);
    await store.complete('k', 't', 60_000, 'fp');
    await store.claim('k', 'u', 'fp', 10_000);
    await store.release('k', 't');
    expect(counter.total()).toBe(6);
  });

  it('bad options get a clear TypeError', () => {
    const make = (options: unknown) => () => new DynamoDbStore(options as never);
    expect(make(undefined)).toThrow(/pass \{ client \}/);
    expect(make({})).toThrow(/pass \{ client \}/);
    expect(make({ client, documentClient: client })).toThrow(/pass \{ client \}/);
    expect(make({ client: {} })).toThrow(/without send\(\)/);
    expect(make({ client, tableName: 'ab' })).toThrow(/3 to 255/);
    expect(make({ client, transactional: 'yes' })).toThrow(/true or false/);
    expect(make({ client, transactional: true, leaseMs: 0 })).toThrow(/leaseMs/);
    expect(new DynamoDbStore({ client })).toBeInstanceOf(DynamoDbStore);
    expect(new DynamoDbStore({ client, transactional: true }).kind).toBe('transactional');
  });
});

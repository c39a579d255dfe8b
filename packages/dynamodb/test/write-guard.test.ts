import { randomUUID } from 'node:crypto';
import {
  BatchExecuteStatementCommand,
  DeleteItemCommand,
  ExecuteStatementCommand,
  ExecuteTransactionCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
} from '@aws-sdk/client-dynamodb';
import {
  createWebhookHandler,
  type Outcome,
  type PaymentPaidEvent,
  type TransactionalStore,
  type WebhookRequestHandler,
} from '@service-pay/core';
import {
  WriteOutsideTransactionError as CoreWriteOutsideTransactionError,
  LateTxUseError,
} from '@service-pay/core/node';
import { samplePaymentPaidEvent, sendSigned } from '@service-pay/core/testing';
import {
  DynamoDbStore,
  DynamoDbStoreError,
  type DynamoDbTransaction,
  type DynamoDbTransactionalStore,
  TRANSACT_WRITE_LIMIT,
  WriteOutsideTransactionError,
} from '@service-pay/dynamodb';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { isPartiqlSelect } from '../src/partiql-select.js';
import { emulatorClient, uniqueTable } from './support/clients.js';
import { countItems, createPkSkTable } from './support/tables.js';

const SECRET = 'whsec_dynamodb_write_guard_tests_0123456789';
const endpoint = inject('dynamodbEndpoint');
const inbox = uniqueTable('guard_inbox');
const credits = uniqueTable('guard_credits');
const audit = uniqueTable('guard_audit');
const event = () => samplePaymentPaidEvent({ paymentId: `p_${randomUUID()}` });
const creditPut = (table: string, paymentId: string) => ({
  TableName: table,
  Item: { pk: { S: paymentId }, sk: { S: randomUUID() } },
});

/** Unhandled rejections seen while a test ran: a plain app would have exited on any of them. */
const unhandled: unknown[] = [];
const noteUnhandled = (reason: unknown) => void unhandled.push(reason);

describe('PartiQL: only what DynamoDB would run as one SELECT is a read', () => {
  it.each([
    'SELECT * FROM "t"',
    'select pk from "t" where pk = ?',
    '  /* audit */ SELECT * FROM "t"',
    '-- a comment\nSELECT * FROM "t"',
    '(SELECT * FROM "t")',
    '/**/SELECT * FROM "t"',
    'SELECT * FROM "t" WHERE s = \'a;INSERT\'',
    'SELECT * FROM "t";',
    'SELECT * FROM "t"; -- trailing comment',
  ])('a read: %s', (text) => {
    expect(isPartiqlSelect(text)).toBe(true);
  });

  it.each([
    'INSERT INTO "t" VALUE {\'pk\': 1}',
    '/* audit */ INSERT INTO "t" VALUE {\'pk\': 1}',
    '-- c\nINSERT INTO "t" VALUE {\'pk\': 1}',
    '(INSERT INTO "t" VALUE {\'pk\': 1})',
    '/**/INSERT INTO "t" VALUE {\'pk\': 1}',
    'UPDATE "t" SET a = 1 WHERE pk = 1',
    'DELETE FROM "t" WHERE pk = 1',
    'UPSERT INTO "t" VALUE {}',
    'EXISTS(SELECT * FROM "t")',
    'SELECTX FROM "t"',
    '/* /* */ SELECT * FROM "t" */ INSERT INTO "t" VALUE {}',
    '/* unclosed SELECT',
    '-- only a comment',
    'SELECT * FROM "t"; INSERT INTO "t" VALUE {}',
    'SELECT * FROM "t" WHERE s = \'unclosed',
    '',
  ])('not a read: %s', (text) => {
    expect(isPartiqlSelect(text)).toBe(false);
  });

  it('text that is not a string is not a read', () => {
    expect(isPartiqlSelect(undefined)).toBe(false);
    expect(isPartiqlSelect({ toString: () => 'SELECT 1' })).toBe(false);
  });
});

describe('DynamoDbStore (transactional): the guard on the store client, refusals, outsideTransaction, late use', () => {
  const client = emulatorClient(endpoint);
  let store: DynamoDbTransactionalStore<DynamoDbTransaction>;
  const outcomes: Outcome[] = [];
  const errors: Array<{ fields: Record<string, unknown>; message: string }> = [];
  const logger = {
    warn: () => {},
    error: (fields: Record<string, unknown>, message: string) => void errors.push({ fields, message }),
  };
  const handler = (
    onPaymentPaid: (event: PaymentPaidEvent, tx: DynamoDbTransaction, outside: <T>(fn: () => T) => T) => Promise<void>,
  ): WebhookRequestHandler =>
    createWebhookHandler({
      secret: SECRET,
      store,
      logger,
      onOutcome: (outcome) => void outcomes.push(outcome),
      onPaymentPaid: (paid, ctx) => onPaymentPaid(paid, ctx.tx, (fn) => ctx.outsideTransaction(fn)),
    });
  const send = (handle: WebhookRequestHandler, paid: PaymentPaidEvent) => sendSigned(handle, paid, SECRET);
  const credited = (paymentId: string) => countItems(client, credits, paymentId);

  beforeAll(async () => {
    store = new DynamoDbStore({ client, tableName: inbox, transactional: true });
    await store.migrate();
    await createPkSkTable(client, credits);
    await createPkSkTable(client, audit);
    process.on('unhandledRejection', noteUnhandled);
    return () => void process.off('unhandledRejection', noteUnhandled);
  });
  afterEach(() => {
    outcomes.length = 0;
    errors.length = 0;
    const seen = unhandled.splice(0);
    expect(seen).toEqual([]);
  });

  /** A partiQL credit, in each way the store's client can be asked to run it. */
  const partiql = (paymentId: string) => {
    const insert = (prefix: string) => ({
      Statement: `${prefix}INSERT INTO "${credits}" VALUE {'pk': ?, 'sk': ?}`,
      Parameters: [{ S: paymentId }, { S: randomUUID() }],
    });
    return [
      () => client.send(new ExecuteStatementCommand(insert('/* audit */ '))),
      () => client.send(new ExecuteStatementCommand(insert('-- c\n'))),
      () => client.send(new ExecuteStatementCommand({ ...insert('('), Statement: `(${insert('').Statement})` })),
      () => client.send(new ExecuteStatementCommand(insert('/**/'))),
      () => client.send(new BatchExecuteStatementCommand({ Statements: [insert('/* audit */ ')] })),
      () => client.send(new BatchExecuteStatementCommand({ Statements: [insert('-- c\n')] })),
      () =>
        client.send(
          new BatchExecuteStatementCommand({
            Statements: [
              { Statement: `SELECT * FROM "${credits}" WHERE pk = ?`, Parameters: [{ S: paymentId }] },
              insert('/**/'),
            ],
          }),
        ),
      () => client.send(new ExecuteTransactionCommand({ TransactStatements: [insert('/* audit */ ')] })),
      () => client.send(new ExecuteTransactionCommand({ TransactStatements: [insert('(')] })),
    ];
  };

  it('a PartiQL credit hidden behind a comment or a parenthesis, alone or in a batch or transaction: both attempts refused, 0 credits', async () => {
    const forms = partiql('shape').length;
    for (let form = 0; form < forms; form++) {
      const paid = event();
      const refusals: unknown[] = [];
      const handle = handler(async (e) => {
        const write = partiql(e.paymentId)[form] as () => Promise<unknown>;
        // Attempt after attempt, the handler catches the refusal and goes on as if the credit were made.
        refusals.push(
          await write().then(
            () => 'sent',
            (error: unknown) => error,
          ),
        );
      });
      for (let attempt = 0; attempt < 2; attempt++) {
        const answer = await send(handle, paid);
        expect(answer.status, `form ${form}`).toBe(500);
      }
      expect(await credited(paid.paymentId), `form ${form}`).toBe(0);
      expect(refusals).toHaveLength(2);
      for (const refusal of refusals) {
        expect(refusal, `form ${form}`).toBeInstanceOf(CoreWriteOutsideTransactionError);
      }
    }
  });

  it('reads pass (GetItem, Query, a commented PartiQL SELECT, a SELECT-only batch); any other command is refused', async () => {
    const paid = event();
    let deleted: unknown;
    const handle = handler(async (e, tx) => {
      await client.send(new GetItemCommand({ TableName: credits, Key: { pk: { S: 'x' }, sk: { S: 'y' } } }));
      await client.send(
        new QueryCommand({
          TableName: credits,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': { S: e.paymentId } },
        }),
      );
      await client.send(
        new ExecuteStatementCommand({
          Statement: `/* audit */ (SELECT * FROM "${credits}" WHERE pk = ?)`,
          Parameters: [{ S: e.paymentId }],
        }),
      );
      await client.send(
        new BatchExecuteStatementCommand({
          Statements: [
            {
              Statement: `-- c\nSELECT * FROM "${credits}" WHERE pk = ? AND sk = ?`,
              Parameters: [{ S: 'a' }, { S: 'b' }],
            },
          ],
        }),
      );
      if (deleted === undefined) {
        deleted = await client
          .send(new DeleteItemCommand({ TableName: credits, Key: { pk: { S: 'x' }, sk: { S: 'y' } } }))
          .then(
            () => 'sent',
            (error: unknown) => error,
          );
      }
      tx.put(creditPut(credits, e.paymentId));
    });
    expect((await send(handle, paid)).status).toBe(500);
    expect(deleted).toBeInstanceOf(WriteOutsideTransactionError);
    expect((deleted as Error).message).toMatch(/DeleteItemCommand.*only GetItem, BatchGetItem, Query, Scan/);
    // The retry, which sends only reads beside ctx.tx, credits once.
    expect((await send(handle, paid)).status).toBe(200);
    expect(await credited(paid.paymentId)).toBe(1);
  });

  it("one WriteOutsideTransactionError class: DynamoDB's is core's", () => {
    expect(WriteOutsideTransactionError).toBe(CoreWriteOutsideTransactionError);
  });

  it('a refused PutItem the handler catches: 500, nothing recorded; the retry credits once', async () => {
    const paid = event();
    let attempts = 0;
    const handle = handler(async (e, tx) => {
      if (++attempts === 1) {
        try {
          await client.send(new PutItemCommand(creditPut(credits, e.paymentId)));
        } catch {
          // swallowed: the delivery must fail all the same
        }
      }
      tx.put(creditPut(credits, e.paymentId));
    });
    const failed = await send(handle, paid);
    expect(failed.status).toBe(500);
    expect(outcomes.at(-1)).toMatchObject({ outcome: 'failed', code: 'HANDLER_FAILED' });
    expect(await credited(paid.paymentId)).toBe(0);
    expect((await send(handle, paid)).status).toBe(200);
    expect(await credited(paid.paymentId)).toBe(1);
  });

  it('a refused PutItem never awaited: 500 and no unhandled rejection; the retry credits once', async () => {
    const paid = event();
    let attempts = 0;
    const handle = handler(async (e, tx) => {
      if (++attempts === 1) void client.send(new PutItemCommand(creditPut(credits, e.paymentId)));
      tx.put(creditPut(credits, e.paymentId));
    });
    expect((await send(handle, paid)).status).toBe(500);
    expect(await credited(paid.paymentId)).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect((await send(handle, paid)).status).toBe(200);
    expect(await credited(paid.paymentId)).toBe(1);
  });

  it(`${TRANSACT_WRITE_LIMIT + 1} ctx.tx writes, each caught, the credit queued last: 500, nothing committed; the retry credits once`, async () => {
    const paid = event();
    let attempts = 0;
    let caught = 0;
    const handle = handler(async (e, tx) => {
      if (++attempts === 1) {
        for (let i = 0; i < TRANSACT_WRITE_LIMIT; i++) {
          try {
            tx.put(creditPut(audit, `${e.paymentId}:${i}`));
          } catch {
            caught++;
          }
        }
      }
      try {
        tx.put(creditPut(credits, e.paymentId));
      } catch {
        caught++;
      }
    });
    const failed = await send(handle, paid);
    expect(failed.status).toBe(500);
    expect(caught).toBe(2);
    const failure = errors.at(-1)?.fields.err;
    expect(failure).toBeInstanceOf(DynamoDbStoreError);
    expect((failure as DynamoDbStoreError).code).toBe('TRANSACTION_TOO_LARGE');
    expect(await credited(paid.paymentId)).toBe(0);
    expect(await countItems(client, audit, `${paid.paymentId}:0`)).toBe(0);
    expect((await send(handle, paid)).status).toBe(200);
    expect(await credited(paid.paymentId)).toBe(1);
  });

  it('ctx.outsideTransaction(() => client.send(PutItem audit)) goes through, and the credit commits with the record', async () => {
    const paid = event();
    const handle = handler(async (e, tx, outside) => {
      await outside(() => client.send(new PutItemCommand(creditPut(audit, e.paymentId))));
      tx.put(creditPut(credits, e.paymentId));
    });
    expect((await send(handle, paid)).status).toBe(200);
    expect(await countItems(client, audit, paid.paymentId)).toBe(1);
    expect(await credited(paid.paymentId)).toBe(1);
  });

  it('a ctx.tx write after the handler returned (void creditOrder that awaits first): loud, named, an outcome; no unhandled rejection', async () => {
    const paid = event();
    let lateUse: () => void = () => {};
    const reported = new Promise<void>((resolve) => (lateUse = resolve));
    let after = false;
    const creditOrder = async (tx: DynamoDbTransaction, e: PaymentPaidEvent) => {
      await client.send(new GetItemCommand({ TableName: credits, Key: { pk: { S: e.paymentId }, sk: { S: 'x' } } }));
      tx.put(creditPut(credits, e.paymentId));
      after = true;
    };
    const handle = createWebhookHandler({
      secret: SECRET,
      store,
      logger,
      onOutcome: (outcome) => {
        outcomes.push(outcome);
        if (outcome.outcome === 'late-use') lateUse();
      },
      onPaymentPaid: async (e, ctx) => {
        void creditOrder(ctx.tx, e);
      },
    });
    expect((await send(handle, paid)).status).toBe(200);
    await reported;
    // The delivery ended when its commit began: the late write may come before or after its answer.
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(['credited', 'late-use']);
    expect(outcomes.find((o) => o.outcome === 'late-use')).toMatchObject({
      code: 'LATE_TX_USE',
      paymentId: paid.paymentId,
      status: 500,
    });
    const line = errors.find((entry) => entry.fields.code === 'LATE_TX_USE');
    expect(line?.fields.paymentId).toBe(paid.paymentId);
    expect(line?.message).toMatch(new RegExp(`payment ${paid.paymentId}.*NOT made`));
    const late = line?.fields.err;
    expect(late).toBeInstanceOf(LateTxUseError);
    expect((late as Error).message).toMatch(/ctx\.tx\.put\(…\) for payment p_.* was NOT made/);
    // The late write returned nothing and threw nothing; the code after it ran, and nothing was written.
    expect(after).toBe(true);
    expect(await credited(paid.paymentId)).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
  });

  it("the store's flagLateUse hears of it, with the payment (the operator's ledger marks the record there)", async () => {
    const flagged: unknown[] = [];
    const flagging: TransactionalStore<DynamoDbTransaction> = {
      kind: 'transactional',
      begin: (key, fingerprint, draft) => store.begin(key, fingerprint, draft),
      flagLateUse: (late) => void flagged.push(late),
    };
    const paid = event();
    let reported: () => void = () => {};
    const done = new Promise<void>((resolve) => (reported = resolve));
    const handle = createWebhookHandler({
      secret: SECRET,
      store: flagging,
      logger,
      onOutcome: (outcome) => void (outcome.outcome === 'late-use' && reported()),
      onPaymentPaid: async (e, ctx) => {
        setImmediate(() => ctx.tx.put(creditPut(credits, e.paymentId)));
      },
    });
    expect((await send(handle, paid)).status).toBe(200);
    await done;
    expect(flagged).toEqual([
      expect.objectContaining({
        paymentId: paid.paymentId,
        code: 'LATE_TX_USE',
        message: expect.stringMatching(/NOT made/),
      }),
    ]);
  });
});

describe('DynamoDbStore and cacheMiddleware', () => {
  it('a client that caches its middleware would skip the guard for commands sent before: refused at construction, saying why', async () => {
    const client = emulatorClient(endpoint, { cacheMiddleware: true });
    const table = uniqueTable('guard_cache');
    await createPkSkTable(client, table);
    // Why: a PutItem sent before a step is added keeps its cached handler, and the step never sees the next one.
    await client.send(new PutItemCommand(creditPut(table, 'before')));
    let seen = 0;
    client.middlewareStack.add(
      (next) => (args) => {
        seen++;
        return next(args);
      },
      { step: 'initialize', name: 'countingStep' },
    );
    await client.send(new PutItemCommand(creditPut(table, 'after')));
    expect(seen).toBe(0);
    expect(await countItems(client, table, 'after')).toBe(1);

    let refused: unknown;
    try {
      new DynamoDbStore({ client, tableName: uniqueTable('guard_cache_inbox'), transactional: true });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(DynamoDbStoreError);
    expect((refused as DynamoDbStoreError).code).toBe('UNGUARDED_CLIENT');
    expect((refused as Error).message).toMatch(/cacheMiddleware: true.*without cacheMiddleware/s);
    // A lease store has no guard to skip: it takes the client as it is.
    expect(() => new DynamoDbStore({ client, tableName: uniqueTable('guard_cache_lease') })).not.toThrow();
  });
});

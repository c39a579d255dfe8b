/**
 * DynamoDbStore against Powertools' idempotency utility with its DynamoDB persistence layer, on the same
 * DynamoDB Local (started here), the same signed deliveries and the same credit:
 *   ours, lease:         createWebhookHandler + DynamoDbStore (lease), the credit a PutItem of the handler's;
 *   ours, transactional: createWebhookHandler + DynamoDbStore (transactional: true), the credit queued on
 *                        ctx.tx and committed with the record in one TransactWriteItems;
 *   Powertools:          verifyWebhook (the same verification as ours), then `makeIdempotent` with
 *                        `DynamoDBPersistenceLayer`, the credit a PutItem inside.
 * Each contestant has its own DynamoDBClient; its requests are counted through the SDK's middleware stack
 * (every request the client sends, the credit's included). Rows: fresh and duplicate deliveries, one at a
 * time. Rounds run interleaved (the order turns every round); the time ratio is the median of the per-round
 * ratios of deliveries/s (ours / Powertools), with its range.
 *
 *   node --import tsx bench/handler-dynamodb.bench.ts
 */
import { randomUUID } from 'node:crypto';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { CreateTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { createWebhookHandler, signWebhook, verifyWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { DynamoDbStore } from '@service-pay/dynamodb';
import { startDynamoDbLocal } from '@service-pay/test-kit/dynamodb';
import { countRequests, type RequestCounter } from '../test/support/request-counter.js';

const SECRET = 'whsec_dynamodb_bench_0123456789abcdef';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PER_ROUND = Number(process.env.BENCH_DELIVERIES ?? 150);
const CONTESTANTS = ['ours, lease', 'ours, transactional', 'Powertools'] as const;
type Contestant = (typeof CONTESTANTS)[number];
interface Delivery {
  body: Buffer;
  headers: Record<string, string>;
}
type Receiver = (delivery: Delivery) => Promise<number>;

function deliveries(count: number): Delivery[] {
  return Array.from({ length: count }, () => {
    const { body, headers } = signWebhook({
      event: samplePaymentPaidEvent({ paymentId: `p_${randomUUID()}` }),
      secret: SECRET,
    });
    return { body: Buffer.from(body), headers: headers as Record<string, string> };
  });
}

const emulator = await startDynamoDbLocal();
const makeClient = () =>
  new DynamoDBClient({
    endpoint: emulator.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
const setup = makeClient();
const createTable = (TableName: string, key: string, sort?: string) =>
  setup.send(
    new CreateTableCommand({
      TableName,
      AttributeDefinitions: [
        { AttributeName: key, AttributeType: 'S' },
        ...(sort ? [{ AttributeName: sort, AttributeType: 'S' as const }] : []),
      ],
      KeySchema: [
        { AttributeName: key, KeyType: 'HASH' },
        ...(sort ? [{ AttributeName: sort, KeyType: 'RANGE' as const }] : []),
      ],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
await createTable('bench_credits', 'pk', 'sk');
await createTable('bench_powertools', 'id');
const creditItem = (paymentId: string) => ({
  TableName: 'bench_credits',
  Item: { pk: { S: paymentId }, sk: { S: randomUUID() } },
});

const clients = Object.fromEntries(CONTESTANTS.map((c) => [c, makeClient()])) as Record<Contestant, DynamoDBClient>;
const counters = Object.fromEntries(CONTESTANTS.map((c) => [c, countRequests(clients[c])])) as Record<
  Contestant,
  RequestCounter
>;

const leaseStore = new DynamoDbStore({ client: clients['ours, lease'], tableName: 'bench_lease' });
await leaseStore.migrate();
const leaseHandler = createWebhookHandler({
  secret: SECRET,
  store: leaseStore,
  onPaymentPaid: async (event) => {
    await clients['ours, lease'].send(new PutItemCommand(creditItem(event.paymentId)));
  },
});
const txStore = new DynamoDbStore({
  client: clients['ours, transactional'],
  tableName: 'bench_tx',
  transactional: true,
});
await txStore.migrate();
const txHandler = createWebhookHandler({
  secret: SECRET,
  store: txStore,
  onPaymentPaid: async (event, ctx) => {
    ctx.tx.put(creditItem(event.paymentId));
  },
});
const config = new IdempotencyConfig({ eventKeyJmesPath: 'paymentId', expiresAfterSeconds: 3600 });
// What Lambda hands a function; without it Powertools warns on every call.
config.registerLambdaContext({ getRemainingTimeInMillis: () => 30_000 } as never);
const powertoolsCredit = makeIdempotent(
  async (event: { paymentId: string }) => {
    await clients.Powertools.send(new PutItemCommand(creditItem(event.paymentId)));
    return { received: true };
  },
  {
    persistenceStore: new DynamoDBPersistenceLayer({
      tableName: 'bench_powertools',
      awsSdkV3Client: clients.Powertools,
    }),
    config,
  },
);

const receivers: Record<Contestant, Receiver> = {
  'ours, lease': async (d) => (await leaseHandler({ method: 'POST', headers: d.headers, rawBody: d.body })).status,
  'ours, transactional': async (d) => (await txHandler({ method: 'POST', headers: d.headers, rawBody: d.body })).status,
  Powertools: async (d) => {
    const { event } = await verifyWebhook({ rawBody: d.body, headers: d.headers }, { secret: SECRET });
    await powertoolsCredit(event);
    return 200;
  },
};

/** Requests by command in the timed runs only, per row. */
const timedByCommand = Object.fromEntries(CONTESTANTS.map((c) => [c, new Map<string, number>()])) as Record<
  Contestant,
  Map<string, number>
>;

async function drive(who: Contestant, batch: Delivery[], timed = false): Promise<{ perSec: number; requests: number }> {
  counters[who].reset();
  const before = counters[who].total();
  const started = performance.now();
  for (const d of batch) {
    const status = await receivers[who](d);
    if (status !== 200) throw new Error(`bench: ${who} answered ${status}`);
  }
  const seconds = (performance.now() - started) / 1000;
  if (timed) {
    for (const [name, n] of counters[who].byCommand)
      timedByCommand[who].set(name, (timedByCommand[who].get(name) ?? 0) + n);
  }
  return { perSec: batch.length / seconds, requests: (counters[who].total() - before) / batch.length };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const range = (xs: number[]) => `${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}`;

// Warm-up: the JVM and the SDK's first requests.
for (const who of CONTESTANTS) await drive(who, deliveries(30));

console.log(
  `\n## DynamoDB Local 1.25.1: DynamoDbStore vs Powertools idempotency (DynamoDB layer), ${ROUNDS} rounds of ${PER_ROUND}`,
);
console.log('| row | contestant | requests / delivery | deliveries/s (median) | ratio to Powertools, median (range) |');
console.log('|---|---|---|---|---|');
for (const kind of ['fresh', 'duplicate'] as const) {
  const samples = Object.fromEntries(
    CONTESTANTS.map((c) => [c, [] as Array<{ perSec: number; requests: number }>]),
  ) as Record<Contestant, Array<{ perSec: number; requests: number }>>;
  for (let round = 0; round < ROUNDS; round++) {
    const batch = deliveries(PER_ROUND);
    const order = round % 2 === 0 ? CONTESTANTS : [...CONTESTANTS].reverse();
    for (const who of order) {
      // Duplicates: each contestant has handled the batch once before the clock starts.
      if (kind === 'duplicate') await drive(who, batch);
      samples[who].push(await drive(who, batch, true));
    }
  }
  for (const who of CONTESTANTS) {
    const ratios = samples[who].map((s, i) => s.perSec / (samples.Powertools[i] as { perSec: number }).perSec);
    console.log(
      `| ${kind} | ${who} | ${median(samples[who].map((s) => s.requests)).toFixed(2)} | ${median(samples[who].map((s) => s.perSec)).toFixed(0)} | ${who === 'Powertools' ? '1' : `${median(ratios).toFixed(2)}x (${range(ratios)})`} |`,
    );
  }
  console.log(
    `  requests by command, ${kind}, timed runs: ${CONTESTANTS.map((c) => `${c}: ${JSON.stringify(Object.fromEntries(timedByCommand[c]))}`).join('; ')}`,
  );
  for (const c of CONTESTANTS) timedByCommand[c].clear();
}

for (const c of [...Object.values(clients), setup]) c.destroy();
await emulator.stop();

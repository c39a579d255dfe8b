import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateTableCommand, type DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDbStore } from '@service-pay/dynamodb';
import { generateMerchant, type Simulator, startSimulator } from '@service-pay/simulator';
import { AppProcess, sleep } from '@service-pay/test-kit';
import { type DynamoDbLocal, startDynamoDbLocal } from '@service-pay/test-kit/dynamodb';
import {
  describeLost,
  describeSlowest,
  FAULT_RETRY,
  type FaultMark,
  type InboxRow,
  lostKinds,
  lostPayments,
  pay,
  RESTART_RETRY,
  senderTally,
  slowestAck,
} from '@service-pay/test-kit/fault-rows';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulatorClient } from '../support/clients.js';
import { countItems, createPkSkTable } from '../support/tables.js';

/**
 * Faults with real processes: three apps (test/fixtures/app.ts, a transactional DynamoDbStore each) on one
 * DynamoDB Local that this file starts itself (in memory; the restart row has its own, which keeps its data), the simulator
 * as the sender with the spec's retries on a faster clock, and credits queued on ctx.tx into a table whose
 * items have no condition of their own. Each row prints one JSON line of figures and must end with 0
 * double and 0 lost.
 */
const STORE_TABLE = 'fault_inbox';
const CREDITS_TABLE = 'fault_credits';
const PLAN_TABLE = 'fault_plan';
const packageDir = fileURLToPath(new URL('../..', import.meta.url));

/** One setup of a row group: its own emulator, its three apps and its sender. */
class Rig {
  readonly merchant = generateMerchant({ name: 'dynamodb-faults' });
  emulator!: DynamoDbLocal;
  client!: DynamoDBClient;
  sim!: Simulator;
  /** Row b's sender: the killed app's restart is not on the fast clock (RESTART_RETRY says why). */
  restartSim!: Simulator;
  apps: AppProcess[] = [];

  constructor(private readonly options: { dbPath?: string; baseDelayMs: number }) {}

  appEnv(instance: string, port = 0): Record<string, string> {
    return {
      DYNAMODB_ENDPOINT: this.emulator.endpoint,
      WEBHOOK_SECRET: this.merchant.webhookSecret,
      INSTANCE: instance,
      PORT: String(port),
      STORE_TABLE,
      CREDITS_TABLE,
      PLAN_TABLE,
      HANDLER_TIMEOUT_MS: '1000',
      LEASE_MS: '3000',
    };
  }

  async start(): Promise<void> {
    this.emulator = await startDynamoDbLocal(this.options.dbPath === undefined ? {} : { dbPath: this.options.dbPath });
    this.client = emulatorClient(this.emulator.endpoint);
    await new DynamoDbStore({ client: this.client, tableName: STORE_TABLE }).migrate();
    await createPkSkTable(this.client, CREDITS_TABLE);
    await this.client.send(
      new CreateTableCommand({
        TableName: PLAN_TABLE,
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    this.sim = await startSimulator({
      merchants: [this.merchant],
      // The spec's 8 attempts with doubling backoff: from 0.2 s, about 25 s of retries in all.
      retry: { ...FAULT_RETRY, baseDelayMs: this.options.baseDelayMs },
      seed: 20261125,
    });
    this.restartSim = await startSimulator({ merchants: [this.merchant], retry: RESTART_RETRY, seed: 20261126 });
    this.apps = await Promise.all(
      ['a', 'b', 'c'].map((name) => AppProcess.start({ cwd: packageDir, env: this.appEnv(name) })),
    );
  }

  async stop(): Promise<void> {
    await Promise.all(this.apps.map((app) => app.stop()));
    await this.sim?.stop();
    await this.restartSim?.stop();
    this.client?.destroy();
    await this.emulator?.stop();
  }

  /** Pays with `deliveries` simultaneous deliveries each, rotated over the apps (or `urls`). */
  pay(paymentIds: string[], deliveries: number, urls = this.apps.map((a) => a.url), sim = this.sim): Promise<void> {
    return pay(sim, paymentIds, deliveries, urls);
  }

  createPayments(count: number, label: string, sim = this.sim): string[] {
    return Array.from(
      { length: count },
      (_, i) => sim.createPayment({ orderNo: `${label}-${i}-${Date.now()}`, notifyUrl: this.apps[0]!.url }).paymentId,
    );
  }

  async plan(paymentIds: string[], fault: string): Promise<void> {
    for (const id of paymentIds) {
      await this.client.send(
        new PutItemCommand({ TableName: PLAN_TABLE, Item: { pk: { S: id }, fault: { S: fault } } }),
      );
    }
  }

  /** The store's completed record of each payment (the inbox row it commits with the credit), if any. */
  async inbox(paymentIds: string[]): Promise<Map<string, InboxRow[]>> {
    const rows = new Map<string, InboxRow[]>();
    for (const id of paymentIds) {
      const { Item: item } = await this.client.send(
        new GetItemCommand({ TableName: STORE_TABLE, Key: { pk: { S: `payment.paid:${id}` } }, ConsistentRead: true }),
      );
      if (item?.st?.S === 'done') {
        rows.set(id, [{ outcome: item.outcome?.S ?? '?', deliveryId: item.deliveryId?.S ?? null }]);
      }
    }
    return rows;
  }

  /**
   * Counts credits per payment and the sender's attempts, prints one JSON line and, for each payment
   * without a credit, why (the sender's attempts against the fault's `marks`, the store's record) with the
   * apps' last stderr lines; returns it all.
   */
  async figures(scenario: string, paymentIds: string[], marks: FaultMark[] = [], sim = this.sim) {
    await sim.waitForIdle({ timeoutMs: 150_000 });
    const counted = await Promise.all(paymentIds.map((id) => countItems(this.client, CREDITS_TABLE, id)));
    const counts = new Map(paymentIds.map((id, i) => [id, counted[i] as number]));
    const lostIds = paymentIds.filter((id) => counts.get(id) === 0);
    const inbox = lostIds.length === 0 ? new Map() : await this.inbox(lostIds);
    const lost = lostPayments(paymentIds, counts, (id) => sim.deliveries({ paymentId: id }), inbox);
    const { attempts, codes, statuses } = senderTally(sim, paymentIds);
    const result = {
      scenario,
      payments: paymentIds.length,
      double: counted.filter((n) => n > 1).length,
      lost: lost.length,
      lostKinds: lostKinds(lost),
      attempts,
      slowestAck: slowestAck(paymentIds.flatMap((id) => sim.deliveries({ paymentId: id }))),
      ...(marks.length > 1 ? { faultMs: (marks.at(-1)?.at ?? 0) - (marks[0]?.at ?? 0) } : {}),
      statuses,
    };
    console.log(JSON.stringify(result));
    const slowest = describeSlowest(
      paymentIds.flatMap((id) => sim.deliveries({ paymentId: id })),
      marks,
    );
    if (slowest !== '') console.log(slowest);
    const stderr = this.apps.map((app) => `[app on ${app.port}, stderr]\n${app.stderr.slice(-15).join('\n')}`);
    const diagnosis = result.double + result.lost > 0 ? [describeLost(lost, marks), ...stderr].join('\n') : '';
    if (diagnosis !== '') console.log(diagnosis);
    return { ...result, codes, diagnosis };
  }
}

describe('DynamoDbStore (transactional) under faults, 3 app processes sharing one DynamoDB Local (in memory)', () => {
  const rig = new Rig({ baseDelayMs: 200 });
  beforeAll(() => rig.start(), 180_000);
  afterAll(() => rig.stop(), 60_000);

  it('a. 5 simultaneous deliveries of every payment over 3 processes: 0 double, 0 lost', async () => {
    const ids = rig.createPayments(40, 'simultaneous');
    await rig.pay(ids, 5);
    const f = await rig.figures('a. 5 simultaneous deliveries x 3 processes', ids);
    expect({ double: f.double, lost: f.lostKinds }, f.diagnosis).toEqual({ double: 0, lost: {} });
    // No app died on the way (an unhandled rejection of a failed request would end the process).
    expect(rig.apps.every((app) => app.alive)).toBe(true);
    // The race was real: deliveries found the payment held by another process and were answered 409.
    expect(f.statuses['409 DELIVERY_IN_PROGRESS'] ?? 0).toBeGreaterThan(0);
  }, 150_000);

  it('b. an app SIGKILLed while its handler holds the key with the credit queued: 0 double, 0 lost', async () => {
    const victim = rig.apps[2] as AppProcess;
    // The held payments are retried only at the killed app's port: their retries must outlast its restart.
    const sim = rig.restartSim;
    const held = rig.createPayments(4, 'killed', sim);
    const others = rig.createPayments(12, 'beside-kill', sim);
    await rig.plan(held, 'hold');
    // The held payments' retries start here, not at the kill: the wait for all four to hold counts too.
    const marks: FaultMark[] = [{ what: 'held payments sent', at: Date.now() }];
    await rig.pay(held, 1, [victim.url], sim);
    await rig.pay(others, 2, undefined, sim);
    await victim.holdingAtLeast(held.length);
    marks.push({ what: 'app killed', at: Date.now() });
    await victim.kill();
    // The sender keeps retrying the dead app; it comes back on the same port, as a supervisor restarts it.
    rig.apps[2] = await AppProcess.start({ cwd: packageDir, env: rig.appEnv('c2', victim.port) });
    marks.push({ what: 'app listening again', at: Date.now() });
    const f = await rig.figures('b. app SIGKILLed mid-handler', [...held, ...others], marks, sim);
    expect({ double: f.double, lost: f.lostKinds }, f.diagnosis).toEqual({ double: 0, lost: {} });
    // No app died on the way (an unhandled rejection of a failed request would end the process).
    expect(rig.apps.every((app) => app.alive)).toBe(true);
  }, 150_000);

  it('c. the emulator paused (SIGSTOP) 7 s while handlers run, then resumed: 0 double, 0 lost', async () => {
    const slow = rig.createPayments(6, 'slow-at-pause');
    const others = rig.createPayments(24, 'beside-pause');
    await rig.plan(slow, 'slow');
    await rig.pay(slow, 2);
    await rig.pay(others, 2);
    await Promise.race(rig.apps.map((app) => app.holdingAtLeast(1)));
    const marks: FaultMark[] = [{ what: 'paused', at: Date.now() }];
    rig.emulator.pause();
    await sleep(7_000);
    rig.emulator.resume();
    marks.push({ what: 'resumed', at: Date.now() });
    const f = await rig.figures('c. DynamoDB Local SIGSTOPped 7 s', [...slow, ...others], marks);
    expect({ double: f.double, lost: f.lostKinds }, f.diagnosis).toEqual({ double: 0, lost: {} });
    // No app died on the way (an unhandled rejection of a failed request would end the process).
    expect(rig.apps.every((app) => app.alive)).toBe(true);
  }, 150_000);

  it('e. handlers past their deadline: rolled back, their late write refused, credited once later', async () => {
    const hung = rig.createPayments(6, 'hang');
    await rig.plan(hung, 'hang');
    await rig.pay(hung, 1);
    const f = await rig.figures('e. handler past its deadline', hung);
    expect({ double: f.double, lost: f.lostKinds }, f.diagnosis).toEqual({ double: 0, lost: {} });
    // No app died on the way (an unhandled rejection of a failed request would end the process).
    expect(rig.apps.every((app) => app.alive)).toBe(true);
    expect(f.codes.filter((c) => c === 'HANDLER_TIMEOUT')).toHaveLength(hung.length);
  }, 150_000);
});

// DynamoDB Local keeps its data only with -sharedDb -dbPath (in memory, a restart loses everything): its
// folder is on /dev/shm where there is one (a killed process keeps what it wrote; on disk, every write's
// fsync made the emulator the bottleneck of the row). Fewer payments, and the sender's backoff starts at
// 0.8 s (about 100 s of retries): the restart alone takes seconds of Java start-up, and a cold JVM answers
// its first requests slower than storeTimeoutMs on a loaded machine.
describe('DynamoDbStore (transactional): the emulator SIGKILLed and restarted with its data', () => {
  const dbPath = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'service-pay-dynamodb-faults-'));
  const rig = new Rig({ dbPath, baseDelayMs: 800 });
  beforeAll(() => rig.start(), 180_000);
  afterAll(async () => {
    await rig.stop();
    rmSync(dbPath, { recursive: true, force: true });
  }, 60_000);

  it('d. the emulator SIGKILLed and restarted (its data kept) while handlers run: 0 double, 0 lost', async () => {
    const slow = rig.createPayments(4, 'slow-at-kill');
    const others = rig.createPayments(12, 'beside-kill-db');
    await rig.plan(slow, 'slow');
    await rig.pay(slow, 2);
    await rig.pay(others, 2);
    await Promise.race(rig.apps.map((app) => app.holdingAtLeast(1)));
    const port = rig.emulator.port;
    const marks: FaultMark[] = [{ what: 'killed', at: Date.now() }];
    await rig.emulator.kill();
    await sleep(1_000);
    rig.emulator = await startDynamoDbLocal({ dbPath, port });
    marks.push({ what: 'answering again', at: Date.now() });
    const f = await rig.figures('d. DynamoDB Local SIGKILLed and restarted', [...slow, ...others], marks);
    expect({ double: f.double, lost: f.lostKinds }, f.diagnosis).toEqual({ double: 0, lost: {} });
    // No app died on the way (an unhandled rejection of a failed request would end the process).
    expect(rig.apps.every((app) => app.alive)).toBe(true);
  }, 240_000);
});

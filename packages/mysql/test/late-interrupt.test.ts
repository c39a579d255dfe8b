import { createWebhookHandler, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { waitFor } from '@service-pay/test-kit';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MySqlStore } from '../src/index.js';
import { openPool, uniqueName } from './support/database.js';

const SECRET = 'whsec_mysql_late_interrupt_0123456789ab';

// A delivery whose handler still runs a statement at its deadline is rolled back by interrupting that
// statement from another connection of the pool. On a full pool the interruption waits for a connection,
// and the one it is waiting to stop may meanwhile end, roll back and go to another delivery: the
// interruption must then stop nothing, not that delivery's statement or session.
describe('a late interruption on a full pool (mysql2, MySqlStore)', () => {
  const inbox = uniqueName('late_kill');
  const marks = uniqueName('late_kill_marks');
  let admin: mysql.Pool;
  let two: mysql.Pool;
  beforeAll(async () => {
    admin = await openPool({ connectionLimit: 2 });
    await admin.query(`create table ${marks} (payment_id varchar(64) not null, slept int not null)`);
    two = await openPool({ connectionLimit: 2 });
  });
  afterAll(async () => {
    await two?.end();
    await admin?.query(`drop table if exists ${inbox}, ${inbox}_keys, ${marks}`);
    await admin?.end();
  });

  /** Whether a statement whose text starts with `text` runs on the server now. */
  const running = async (text: string) => {
    const [rows] = await admin.query(
      "select count(*) as n from information_schema.processlist where command = 'Query' and info like ?",
      [`${text}%`],
    );
    return Number((rows as Array<{ n: unknown }>)[0]?.n) > 0;
  };

  it('never stops the statement of the delivery that got the connection next', async () => {
    const store = new MySqlStore({ pool: two, tableName: inbox });
    await store.migrate();
    const hung = samplePaymentPaidEvent({ paymentId: `p_hung_${inbox}` });
    const next = samplePaymentPaidEvent({ paymentId: `p_next_${inbox}` });
    const handle = createWebhookHandler({
      secret: SECRET,
      store,
      handlerTimeoutMs: 1_000,
      storeTimeoutMs: 20_000,
      logger: { warn: () => {}, error: () => {} },
      onPaymentPaid: async (event, ctx) => {
        if (event.paymentId === hung.paymentId) {
          // Past the deadline: the rollback queues behind it, and the interruption is sent.
          await ctx.tx.query('select sleep(4) as slept_hung');
          return;
        }
        // A KILL QUERY would fail this statement (and so the delivery), a KILL its connection.
        const [rows] = await ctx.tx.query('select sleep(0.8) as slept_next');
        const slept = Number((rows as Array<{ slept_next: unknown }>)[0]?.slept_next);
        await ctx.tx.query(`insert into ${marks} (payment_id, slept) values (?, ?)`, [event.paymentId, slept]);
      },
    });
    const send = (event: ReturnType<typeof samplePaymentPaidEvent>) => {
      const { body, headers } = signWebhook({ event, secret: SECRET });
      return handle({ method: 'POST', headers, rawBody: body });
    };

    // The app holds one of the pool's two connections; the hung delivery takes the other.
    const held = await two.getConnection();
    let released = false;
    try {
      const hungAnswer = send(hung);
      await waitFor('the hung statement to run', () => running('select sleep(4)'), { timeoutMs: 10_000 });
      // The next delivery queues for a connection before the deadline, so it is lent the hung one's first.
      const nextAnswer = send(next);
      await waitFor(
        "the next delivery's statement to run on the hung one's connection",
        () => running('select sleep(0.8)'),
        { timeoutMs: 10_000 },
      );
      // Now the interruption, queued since the deadline, gets the connection the app held.
      held.release();
      released = true;
      expect((await nextAnswer).status).toBe(200);
      // HANDLER_TIMEOUT, answered once its rollback ended.
      expect((await hungAnswer).status).toBe(500);
    } finally {
      if (!released) held.release();
    }
    const [rows] = await admin.query(`select payment_id, slept from ${marks}`);
    expect(rows).toEqual([{ payment_id: next.paymentId, slept: 0 }]);
  }, 30_000);

  it('stops the statement it saw, and leaves its session to be lent again', async () => {
    const store = new MySqlStore({ pool: two, tableName: inbox });
    let slept: unknown; // the late handler's statement: its answer, or the errno that ended it
    const handle = createWebhookHandler({
      secret: SECRET,
      store,
      handlerTimeoutMs: 300,
      logger: { warn: () => {}, error: () => {} },
      onPaymentPaid: async (_event, ctx) => {
        try {
          const [rows] = await ctx.tx.query('select sleep(30) as slept_long');
          slept = (rows as Array<{ slept_long: unknown }>)[0]?.slept_long;
        } catch (error) {
          // 1317 (ER_QUERY_INTERRUPTED): stopped by KILL QUERY. KILL (the session) loses the connection.
          slept = (error as { errno?: unknown }).errno;
        }
      },
    });
    const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: SECRET });
    expect((await handle({ method: 'POST', headers, rawBody: body })).status).toBe(500);
    await waitFor('the late handler to see its statement stopped', () => slept, { timeoutMs: 10_000 });
    expect(slept).toBe(1317);
  }, 30_000);
});

import type { InboxDraft, TransactionalStore } from '@service-pay/core';
import { answerBeforeRollback, creditOnce } from '@service-pay/sql/testing';
import { rollbackGate, waitFor } from '@service-pay/test-kit';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../src/postgres-store.js';
import { type GatedStore, POSTGRES_CLIENTS } from './clients/index.js';
import { openPGlite, openPool, uniqueName } from './support/database.js';

// A duplicate's transaction changes nothing. It holds the key's lock until its ROLLBACK (the claim tries the
// lock before it writes), but a claim that meets that lock reads the recorded row: so the store answers a
// duplicate without waiting for its ROLLBACK. Proven here by holding every ROLLBACK the pool's connections
// send behind a gate: the duplicate is answered while its ROLLBACK waits, and another delivery of the same
// payment meanwhile, meeting its lock, is a duplicate too, never "in progress".

const draft: InboxDraft = { paymentId: 'p_dup', deliveryId: 'dl_dup', source: 'webhook' };

/** `begin` as the pipeline calls it, with the inbox row's draft (the writing claim). */
const deliver = (store: TransactionalStore<unknown>, key: string) => store.begin(key, 'fp', draft);

// Every client whose connections can be gated: a pool of its own with its ROLLBACKs behind the gate, and
// the test's own pool beside it that reads the locks and drops the tables.
for (const client of POSTGRES_CLIENTS) {
  const gatedStore = client.gatedStore;
  if (gatedStore === undefined) continue;
  describe(`a duplicate on ${client.name}`, () => {
    const gate = rollbackGate();
    let gated: GatedStore;
    let pool: pg.Pool;
    let store: GatedStore['store'];
    let inbox: string;

    beforeAll(async () => {
      pool = await openPool({ max: 2 });
      inbox = uniqueName('dup_answer');
      gated = await gatedStore(inbox, gate.patch);
      store = gated.store;
      await store.migrate();
    });
    afterAll(async () => {
      gate.open();
      await gated?.close();
      await pool.query(`drop table if exists ${inbox}`);
      await pool.query(`drop function if exists ${inbox}_take_v2, ${inbox}_claim`);
      await pool.end();
    });

    it('is answered before its ROLLBACK, another delivery meeting its lock meanwhile is a duplicate, and the connection goes back after it', async () => {
      // The key's own lock (the store's `hashtextextended('<inbox>:' || key, 0)`, a bigint: its high and
      // low halves as classid and objid), not every advisory lock of the database: other files' stores take
      // theirs on the same server at the same time.
      const advisoryLocks = async () =>
        (
          await pool.query(
            `select count(*)::int as n
               from pg_locks, (select hashtextextended($1 || ':' || $2, 0) as lock) as held
              where locktype = 'advisory' and objsubid = 1
                and database = (select oid from pg_database where datname = current_database())
                and classid::bigint = (held.lock >> 32) & 4294967295 and objid::bigint = held.lock & 4294967295`,
            [inbox, 'k_dup'],
          )
        ).rows[0].n;
      try {
        // Its ROLLBACK is sent and held: the answer is already there.
        expect(await answerBeforeRollback(store, gate, 'k_dup')).toEqual({ state: 'completed', fingerprint: 'fp' });
        // It still holds the key's lock (its transaction has not ended) ...
        expect(await advisoryLocks()).toBe(1);
        // ... and the same payment again, meeting that lock, reads the row: a duplicate, not "in progress".
        expect(await deliver(store, 'k_dup')).toEqual({ state: 'completed', fingerprint: 'fp' });
      } finally {
        gate.open();
      }
      await waitFor('the pool to be idle', () => gated.idle(), { timeoutMs: 5_000 }, 5);
    });

    it('a fresh payment meanwhile is claimed and committed as usual', async () => {
      await creditOnce({ store, credit: async () => {} }, 'k_seen', draft.paymentId);
      gate.close();
      try {
        expect((await deliver(store, 'k_seen')).state).toBe('completed');
        await creditOnce({ store, credit: async () => {} }, 'k_new', draft.paymentId);
        expect((await deliver(store, 'k_new')).state).toBe('completed');
      } finally {
        gate.open();
      }
      const { rows } = await pool.query(`select key from ${inbox} where key in ('k_seen', 'k_new') order by key`);
      expect(rows.map((r) => r.key)).toEqual(['k_new', 'k_seen']);
    });
  });
}

describe('beside a process of an earlier version (a rolling upgrade)', () => {
  let pool: pg.Pool;
  let inbox: string;
  let store: PostgresStore;
  const oldTake = (key: string) => `SELECT ${inbox}_take('${key}', 'fp', 'p_old', 'dl_old', 'webhook')::text AS take`;

  beforeAll(async () => {
    pool = await openPool({ max: 4 });
    inbox = uniqueName('dup_upgrade');
    store = new PostgresStore({ pool, tableName: inbox });
    await store.migrate();
    // The take function as the version before made it (answering a record, the row read before the lock),
    // which that version's processes still call while the new ones run.
    await pool.query(`CREATE OR REPLACE FUNCTION ${inbox}_take(claim_key text, claim_fingerprint text, claim_payment_id text, claim_delivery_id text, claim_source text, OUT locked boolean, OUT inserted boolean, OUT fingerprint text, OUT pid integer, OUT xact_us text)
LANGUAGE plpgsql VOLATILE AS $f$
BEGIN
  locked := false;
  inserted := false;
  SELECT inbox.fingerprint INTO fingerprint FROM ${inbox} AS inbox WHERE inbox.key = claim_key;
  IF NOT FOUND THEN
    locked := pg_try_advisory_xact_lock(hashtextextended('${inbox}:' || claim_key, 0));
  END IF;
  IF locked THEN
    INSERT INTO ${inbox} AS inbox (key, fingerprint, payment_id, delivery_id, source, outcome)
      VALUES (claim_key, claim_fingerprint, claim_payment_id, claim_delivery_id, claim_source, 'credited')
      ON CONFLICT (key) DO NOTHING;
    inserted := FOUND;
  END IF;
  pid := pg_backend_pid();
  xact_us := ((extract(epoch FROM now()) * 1000000)::bigint)::text;
END
$f$`);
  });
  afterAll(async () => {
    await pool.query(`drop table if exists ${inbox}`);
    await pool.query(`drop function if exists ${inbox}_take, ${inbox}_take_v2, ${inbox}_claim`);
    await pool.end();
  });

  it('a key this version holds is held for the earlier one, and the other way round', async () => {
    const claim = await deliver(store, 'k_new_first');
    expect(claim.state).toBe('claimed');
    const other = await pool.connect();
    try {
      await other.query('BEGIN');
      // The earlier version's claim meets the lock: not taken, nothing written.
      expect((await other.query(oldTake('k_new_first'))).rows[0].take).toMatch(/^\(f,f,,\d+,\d+\)$/);
      await other.query('ROLLBACK');
      // The earlier version holds a key in its open transaction: this version is told "in progress".
      await other.query('BEGIN');
      expect((await other.query(oldTake('k_old_first'))).rows[0].take).toMatch(/^\(t,t,,\d+,\d+\)$/);
      expect(await deliver(store, 'k_old_first')).toMatchObject({ state: 'in-progress' });
      await other.query('COMMIT');
      // Committed by the earlier version: a duplicate here.
      expect(await deliver(store, 'k_old_first')).toEqual({ state: 'completed', fingerprint: 'fp' });
    } finally {
      // Whatever failed above, nothing stays open to hold the table when it is dropped.
      await other.query('ROLLBACK').catch(() => {});
      other.release();
      if (claim.state === 'claimed') await claim.session.rollback(undefined);
    }
  });
});

describe('a duplicate on PGlite (one connection)', () => {
  it('is answered after its ROLLBACK, so the next delivery finds the connection free', async () => {
    const pglite = await openPGlite();
    try {
      const store = new PostgresStore({ pglite, tableName: 'inbox' });
      await store.migrate();
      await creditOnce({ store, credit: async () => {} }, 'k_1', draft.paymentId);
      expect((await deliver(store, 'k_1')).state).toBe('completed');
      // Answered before its ROLLBACK, the duplicate would leave PGlite busy: this would be "in progress".
      const next = await deliver(store, 'k_2');
      expect(next.state).toBe('claimed');
      if (next.state === 'claimed') await next.session.rollback(undefined);
      expect((await pglite.query<{ n: number }>('select count(*)::int as n from inbox')).rows[0]?.n).toBe(1);
    } finally {
      await pglite.close();
    }
  });
});

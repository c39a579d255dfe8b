/**
 * The server's side of a delivery, counted in instructions: one PostgreSQL backend (single-user mode, no
 * network, no other session) runs the transactions the ORM stores send and those of the hand-rolled
 * transaction `orm-stores.bench.ts` times them against, under valgrind, and each kind's instructions per
 * transaction are the difference between a run of 2N transactions and one of N (start-up cancels out):
 *
 *   store, fresh:           BEGIN; SELECT <table>_take_v2(...) AS take; UPDATE orders; COMMIT
 *   hand-rolled, fresh:     BEGIN; INSERT INTO inbox ... ON CONFLICT DO NOTHING RETURNING key; UPDATE; COMMIT
 *   store, duplicate:       BEGIN; SELECT <table>_take_v2(...) AS take; ROLLBACK
 *   hand-rolled, duplicate: BEGIN; INSERT ... ON CONFLICT DO NOTHING RETURNING key; COMMIT
 *
 * Timing the server from outside (its CPU in /proc, in 10 ms ticks, or a client's wall time) moved by 10-20
 * us a transaction between runs on a shared machine, as much as the differences being decided; these counts
 * repeat to about 0.1%. The statements are the store's own (`InboxSql`, the inbox made by its `migrate()`),
 * sent as literal SQL: single-user mode has no extended protocol, so the hand-rolled INSERT's parameters
 * are written in (its parse and plan are the same, per message, as the unnamed statement a client sends).
 *
 *   node --import tsx bench/server-icount.ts [N]        (default N = 1000; about a minute)
 *
 * Needs valgrind and PostgreSQL's server binaries (`/usr/lib/postgresql/<version>/bin`, or `PG_BINDIR`).
 * As root, the server runs as the `postgres` user (it refuses root).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InboxSql, tableName } from '@service-pay/sql/postgres';

const N = Number(process.argv[2] ?? 1000);
const ORDERS = 100_000;
const table = tableName('bench_inbox', 'PostgresStore');
const inbox = new InboxSql(table);

function binDir(): string {
  if (process.env.PG_BINDIR !== undefined) return process.env.PG_BINDIR;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => join(root, v, 'bin')).find((dir) => existsSync(join(dir, 'postgres')));
  if (found === undefined) throw new Error('server-icount: no PostgreSQL server binaries; set PG_BINDIR');
  return found;
}

const bin = binDir();
const asRoot = process.getuid?.() === 0;
/** The server's user, who must be able to read the input files, when this process is root. */
const serverUid = asRoot ? Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })) : undefined;
const work = mkdtempSync(join(tmpdir(), 'server-icount-'));
const data = join(work, 'data');

/** Runs a command as the server's user: itself, or `postgres` when this process is root. */
function run(command: string, args: string[], input?: string): { stdout: string; stderr: string } {
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  const result = spawnSync(file, argv, { input, encoding: 'utf8', maxBuffer: 1 << 28 });
  if (result.status !== 0) throw new Error(`${command} failed (${result.status}): ${result.stderr.slice(-2000)}`);
  return { stdout: result.stdout, stderr: result.stderr };
}

/** Statements for single-user mode's `-j`: each ends with a semicolon and an empty line. */
const script = (statements: string[]) => `${statements.map((s) => `${s};`).join('\n\n')}\n\n`;

/** The backend's instructions over `statements`, counted by cachegrind. */
function instructions(statements: string[]): number {
  const file = join(work, 'input.sql');
  writeFileSync(file, script(statements));
  if (serverUid !== undefined) chownSync(file, serverUid, 0);
  const { stderr } = run('bash', [
    '-c',
    `valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "${bin}/postgres" --single -j ` +
      `-c synchronous_commit=off -c fsync=off -D "${data}" postgres < "${file}" > /dev/null`,
  ]);
  const refs = /I\s+refs:\s+([\d,]+)/.exec(stderr)?.[1];
  if (refs === undefined) throw new Error(`server-icount: valgrind printed no count: ${stderr.slice(-1000)}`);
  return Number(refs.replaceAll(',', ''));
}

const draft = (i: string) => ({ paymentId: `pay_${i}`, deliveryId: `dl_${i}`, source: 'webhook' as const });
const key = (i: string) => `payment.paid:pay_${i}`;
const FINGERPRINT = '100.00 USDT';
const handInsert = (i: string) =>
  `INSERT INTO bench_hand_inbox (key, fingerprint, payment_id, delivery_id, source, outcome) VALUES ` +
  `('${key(i)}', '${FINGERPRINT}', 'pay_${i}', 'dl_${i}', 'webhook', 'credited') ON CONFLICT DO NOTHING RETURNING key`;
const credit = (n: number) => `UPDATE bench_orders SET paid = true WHERE order_no = 'ord_${1 + (n % ORDERS)}'`;

/** One kind's statements for `count` transactions; fresh kinds take keys of their own (`run` tells runs apart). */
const kinds: Record<string, (count: number, run: string) => string[]> = {
  'store, fresh': (count, run) =>
    Array.from({ length: count }, (_, n) => [
      'BEGIN',
      inbox.take(key(`${run}_${n}`), FINGERPRINT, draft(`${run}_${n}`)),
      credit(n),
      'COMMIT',
    ]).flat(),
  'hand-rolled, fresh': (count, run) =>
    Array.from({ length: count }, (_, n) => ['BEGIN', handInsert(`${run}_${n}`), credit(n), 'COMMIT']).flat(),
  'store, duplicate': (count) =>
    Array.from({ length: count }, (_, n) => [
      'BEGIN',
      inbox.take(key(`seen_${n}`), FINGERPRINT, draft(`seen_${n}`)),
      'ROLLBACK',
    ]).flat(),
  'hand-rolled, duplicate': (count) =>
    Array.from({ length: count }, (_, n) => ['BEGIN', handInsert(`seen_${n}`), 'COMMIT']).flat(),
};

try {
  if (serverUid !== undefined) chownSync(work, serverUid, 0);
  run(`${bin}/initdb`, ['-D', data, '-A', 'trust', '--no-sync']);
  // The store's inbox as its migrate() makes it (the transaction's advisory lock aside), the hand-rolled
  // inbox a copy of it, the orders, and 2N payments recorded in both (the duplicates).
  const [, ...migrate] = inbox.migrateStatements();
  const seen = Array.from({ length: 2 * N }, (_, n) => `seen_${n}`);
  run(
    `${bin}/postgres`,
    ['--single', '-j', '-c', 'fsync=off', '-D', data, 'postgres'],
    script([
      ...migrate,
      `CREATE TABLE bench_hand_inbox (LIKE ${table.sql} INCLUDING ALL)`,
      'CREATE TABLE bench_orders (order_no text PRIMARY KEY, paid boolean NOT NULL DEFAULT false)',
      `INSERT INTO bench_orders SELECT 'ord_' || g, false FROM generate_series(1, ${ORDERS}) g`,
      ...seen.map(handInsert),
      ...seen.map((i) => inbox.recordApart(key(i), FINGERPRINT, { outcome: 'credited', ...draft(i) })),
      'VACUUM ANALYZE',
    ]),
  );
  const counts: Record<string, number> = {};
  for (const [kind, statements] of Object.entries(kinds)) {
    const once = instructions(statements(N, `a${N}`));
    const twice = instructions(statements(2 * N, `b${N}`));
    counts[kind] = Math.round((twice - once) / N);
  }
  const row = (kind: string) => {
    const store = counts[`store, ${kind}`] as number;
    const hand = counts[`hand-rolled, ${kind}`] as number;
    return `${kind.padEnd(10)} ${store.toLocaleString('en').padStart(10)} ${hand.toLocaleString('en').padStart(12)} ${(store / hand).toFixed(2).padStart(11)}`;
  };
  console.log(`PostgreSQL server instructions per transaction (one backend, valgrind), N = ${N}`);
  console.log(`${''.padEnd(10)} ${'store'.padStart(10)} ${'hand-rolled'.padStart(12)} ${'store/hand'.padStart(11)}`);
  console.log(row('fresh'));
  console.log(row('duplicate'));
} finally {
  rmSync(work, { recursive: true, force: true });
}

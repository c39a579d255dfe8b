import type { LedgerEntry } from '@service-pay/core';
import { integerFlag, parse } from './args.js';
import type { Io } from './io.js';
import { openLedger } from './ledger-source.js';
import { EXIT, UsageError } from './usage-error.js';

export const PAYMENTS_HELP = `Usage: service-pay payments [paymentId] [options]

Reads the operator's ledger in your shop's own database: the payments whose verified webhooks failed in
your app (the handler threw, timed out, or was refused) and have not been credited since, and the ones
flagged for a look. With a payment id: that payment's story and what to do.

Options:
  --database-url URL      postgres://..., mysql://... (or mariadb://...), or a SQLite file (.sqlite, .db)
  --redis-url URL         redis://... (a RedisDedupeStore's ledger)
  --table NAME            the store's inbox table, default service_pay_inbox (the ledger is NAME_ledger)
  --key-prefix PREFIX     the RedisDedupeStore's keyPrefix, default service-pay:dedupe:
  --limit N               at most N payments, default 50
  --json                  print JSON
  -h, --help              show this help

The store package and driver for your database must be installed where you run it (your app):
@service-pay/postgres + pg, @service-pay/mysql + mysql2, @service-pay/sqlite + better-sqlite3, or
@service-pay/redis + ioredis.

Exit codes: 0 printed, 1 the database failed or the payment has no entry, 2 bad usage.`;

const FLAGS = {
  'database-url': { type: 'string' },
  'redis-url': { type: 'string' },
  table: { type: 'string' },
  'key-prefix': { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export async function paymentsCommand(args: string[], io: Io): Promise<number> {
  const positional = args[0] !== undefined && !args[0].startsWith('-') ? args[0] : undefined;
  const v = parse(positional === undefined ? args : args.slice(1), FLAGS);
  if (v.help) {
    io.out(PAYMENTS_HELP);
    return EXIT.OK;
  }
  if (positional !== undefined && !/^p_[\x21-\x7e]{1,200}$/.test(positional))
    throw new UsageError(`a payment id starts with p_, got ${JSON.stringify(positional.slice(0, 40))}`);
  const limit = integerFlag(v.limit, 'limit') ?? 50;
  if (limit < 1 || limit > 500) throw new UsageError('--limit must be between 1 and 500');
  const { ledger, close } = await openLedger({
    databaseUrl: v['database-url'],
    redisUrl: v['redis-url'],
    table: v.table,
    keyPrefix: v['key-prefix'],
  });
  try {
    if (positional !== undefined) {
      const entry = await ledger.story(positional);
      if (v.json) io.out(JSON.stringify(entry ?? null, null, 2));
      else if (entry === undefined) io.out(`${positional}: no failure recorded for this payment.`);
      else io.out(story(entry));
      return entry === undefined ? EXIT.FAILURE : EXIT.OK;
    }
    const [page, counts] = await Promise.all([ledger.failing({ limit }), ledger.counts()]);
    if (v.json) io.out(JSON.stringify({ counts, entries: page.entries, next: page.next ?? null }, null, 2));
    else {
      io.out(`${counts.failing} failing, ${counts.flagged} flagged, ${counts.closed} closed`);
      if (page.entries.length > 0) io.out(table(page.entries));
      if (page.next !== undefined) io.out(`(more: --limit ${Math.min(500, limit * 2)}, or the operator page)`);
    }
    return EXIT.OK;
  } finally {
    await close();
  }
}

const time = (ms: number) => (ms > 0 ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) : '-');

/** The entries as an aligned table, the error cut to fit a terminal line. */
export function table(entries: LedgerEntry[]): string {
  const rows = [
    ['PAYMENT', 'ORDER', 'AMOUNT', 'STATE', 'ATTEMPTS', 'LAST FAILED (UTC)', 'LAST ERROR'],
    ...entries.map((e) => [
      e.paymentId,
      e.orderNo,
      `${e.amount} ${e.tokenSymbol}`.trim(),
      e.state === 'flagged' ? `flagged:${e.flag}` : e.state,
      String(e.attempts),
      time(e.lastFailedAt),
      `${e.lastError.code}: ${e.lastError.message}`.slice(0, 60),
    ]),
  ];
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] as string).length))) ?? [];
  return rows
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] as number))).join('  '))
    .join('\n');
}

/** One payment's story: the payment, its failures, the last error, and what to do next. */
export function story(e: LedgerEntry): string {
  const lines = [
    `payment   ${e.paymentId}  (order ${e.orderNo}, ${e.amount} ${e.tokenSymbol})`.trimEnd(),
    `state     ${e.state}${e.flag === undefined ? '' : ` (${e.flag})`}${e.closedBy === undefined ? '' : ` by ${e.closedBy}${e.closedAt === undefined ? '' : ` at ${time(e.closedAt)}`}`}`,
    `attempts  ${e.attempts} failed, first ${time(e.firstFailedAt)}, last ${time(e.lastFailedAt)} (UTC)`,
    `error     ${e.lastError.code}: ${e.lastError.message}`,
    `to do     ${advice(e)}`,
  ];
  return lines.join('\n');
}

function advice(e: LedgerEntry): string {
  if (e.state === 'closed') return 'nothing: the payment was credited since.';
  if (e.flag === 'payload-conflict')
    return 'compare the payment on the service with the order you credited: a delivery carried other fields.';
  if (e.flag === 'late-tx-use') return 'check the handler awaits every ctx.tx call; then check the order by hand.';
  return `fix what the error says, then reconcile it once: the operator page's Reconcile button, or createReconciler({ ... }).reconcile('${e.paymentId}') (credits it once through your handler).`;
}

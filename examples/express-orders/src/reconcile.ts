/**
 * `pnpm reconcile`: one reconciliation pass over this shop's orders still pending a minute after they
 * were placed (`--older-than-ms 0` takes them all). Each one's payment is read back from the service and,
 * when it is PAID, credited once through the same store and credit as the webhook. Prints one line per
 * order and the counts; exits 1 if a payment could not be reconciled (`failed`) or was in `conflict`.
 *
 * Same environment as `pnpm start`. It reads the shop's database, so it is useful with `DATABASE_URL`
 * (the default PGlite lives in the memory of the process that made it). The running shop does the same
 * every minute on its own (its reconcile loop); this is for a one-off catch-up, from a cron job or by hand.
 */
import { parseArgs } from 'node:util';
import { bootShop, readConfig } from '@service-pay/example-shop-kit';

const { values } = parseArgs({ options: { 'older-than-ms': { type: 'string', default: '60000' } } });
const olderThanMs = Number(values['older-than-ms']);
if (!(Number.isSafeInteger(olderThanMs) && olderThanMs >= 0)) {
  throw new Error('--older-than-ms must be a whole number of milliseconds >= 0.');
}

const booted = await bootShop(readConfig(), {
  notifyUrl: () => {
    throw new Error('pnpm reconcile places no orders.');
  },
});
try {
  const report = await booted.reconcilePending({ olderThanMs });
  for (const r of report.results) {
    console.log([r.paymentId, r.outcome, r.status ?? '-', r.code ?? '', r.message ?? ''].join('  ').trimEnd());
  }
  console.log(JSON.stringify({ reconciled: report.results.length, counts: report.counts }));
  process.exitCode = report.counts.failed + report.counts.conflict > 0 ? 1 : 0;
} finally {
  await booted.close();
}

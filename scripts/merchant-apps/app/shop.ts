// The part every merchant app here shares: an Express server with the webhook route, a logger that prints
// one JSON line per log call (as pino would), and the handler that makes the mistake the delivery's order
// number names. Each client's program (pg.ts, prisma-pg.ts, ...) builds its store as that client's README
// says and hands over the client-specific writes.
import type { PaymentPaidEvent, TransactionalStore } from '@service-pay/core';
import { serviceWebhook } from '@service-pay/express';
import express from 'express';

/** What a mistake does, by kind; the driver reads the kind from the case name before the colon. */
export type Mistake<Tx> = (event: PaymentPaidEvent, tx: Tx) => unknown;

export interface Merchant<Tx> {
  store: TransactionalStore<Tx>;
  /** The right way: the credit written through ctx.tx, awaited. */
  credit: (event: PaymentPaidEvent, tx: Tx) => Promise<unknown>;
  /** `global: ...`, `unawaited: ...` and `own: ...` cases, keyed by the name the table shows. */
  mistakes: Record<string, Mistake<Tx>>;
}

export const env = {
  databaseUrl: process.env.DATABASE_URL ?? '',
  credits: process.env.CREDITS_TABLE ?? 'credits',
  inbox: process.env.INBOX_TABLE ?? 'service_pay_inbox',
  secret: process.env.SERVICE_WEBHOOK_SECRET ?? '',
  client: process.env.CLIENT_LABEL ?? 'app',
};

/** Starts the app on a free port of 127.0.0.1 and prints `listening <port>` for the driver. */
export function startShop<Tx>(merchant: Merchant<Tx>): void {
  const attempts = new Map<string, number>();
  const log =
    (level: string) =>
    (fields: Record<string, unknown>, message: string): void => {
      const err = fields.err as { code?: unknown; message?: unknown } | undefined;
      const line = {
        level,
        message,
        paymentId: fields.paymentId,
        code: fields.code,
        status: fields.status,
        errCode: err?.code,
        errMessage: err?.message,
      };
      process.stdout.write(`LOG ${JSON.stringify(line)}\n`);
    };
  const app = express();
  app.post(
    '/webhooks/service',
    serviceWebhook({
      secret: env.secret,
      store: merchant.store,
      logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
      onPaymentPaid: async (event, ctx) => {
        const attempt = (attempts.get(event.paymentId) ?? 0) + 1;
        attempts.set(event.paymentId, attempt);
        const name = event.orderNo.slice(0, event.orderNo.lastIndexOf('|'));
        const mistake = merchant.mistakes[name];
        if (mistake === undefined) {
          await merchant.credit(event, ctx.tx as Tx);
          return;
        }
        await mistake(event, ctx.tx as Tx);
        // The first attempt then fails on something else (an API call that timed out): the sender retries,
        // and the same code runs again. A write that committed apart from the delivery now counts twice.
        if (attempt === 1 && !name.startsWith('unawaited')) throw new Error('the ledger API timed out');
      },
    }),
  );
  process.stdout.write(`cases ${JSON.stringify(Object.keys(merchant.mistakes))}\n`);
  const server = app.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address !== null && typeof address === 'object') process.stdout.write(`listening ${address.port}\n`);
  });
}

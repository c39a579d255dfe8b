import type { Server } from 'node:http';
import { sleep } from './wait-for.js';

/**
 * What a fault-rows app process (a SQL package's `test/fixtures/app.ts`) tells the shared handler: how to
 * take a payment's planned fault and how its client credits and stalls through `ctx.tx`. Described here
 * without importing `@service-pay/core`: core's own tests use this kit, so a dependency on it would make the
 * workspace a cycle.
 */
export interface FaultAppParts<Tx> {
  /** Takes the payment's planned fault once (autocommit, on a pool apart from the handler's). */
  takeFault(paymentId: string): Promise<string | undefined>;
  /** One credit row through the delivery's transaction. */
  credit(tx: Tx, paymentId: string, who: string): Promise<unknown>;
  /** A 30 s sleep in SQL through the delivery's transaction (`hang-in-sql`). */
  sleepInSql(tx: Tx): Promise<unknown>;
  /** A row that fails the COMMIT (`commit-bomb`), where the database can. */
  commitBomb?(tx: Tx, paymentId: string): Promise<unknown>;
}

/**
 * The webhook options every fault-rows app shares: the secret (`WEBHOOK_SECRET`), the deadline
 * (`HANDLER_TIMEOUT_MS`, default 30 s), a quiet logger that prints errors with the app's name (`INSTANCE`),
 * all read from `env` as `AppProcess` sets them, and `onPaymentPaid`, which credits and then acts out the payment's planned fault:
 * `hold` (say HOLDING, wait forever), `slow` (say HOLDING, take 1.5 s), `commit-bomb`, `hang` (ignore the
 * signal 2.5 s, then credit again as `late` through the old tx), `hang-in-sql`.
 *
 * @example
 * ```ts
 * app.post('/webhook', serviceWebhook({ store, ...faultHandlerOptions(process.env, { takeFault, credit, sleepInSql }) }));
 * ```
 */
export function faultHandlerOptions<Tx>(env: Record<string, string | undefined>, parts: FaultAppParts<Tx>) {
  const { WEBHOOK_SECRET: secret, INSTANCE: instance, HANDLER_TIMEOUT_MS = '30000' } = env;
  if (!secret || !instance) throw new Error('fault app: WEBHOOK_SECRET and INSTANCE must be set');
  const { credit } = parts;
  return {
    secret,
    handlerTimeoutMs: Number(HANDLER_TIMEOUT_MS),
    logger: {
      warn: () => {},
      error: (fields: { code?: unknown }, message: string) =>
        console.error(`[${instance}] ${message}`, fields.code ?? ''),
    },
    onPaymentPaid: async (event: { paymentId: string }, ctx: { tx: Tx }) => {
      const fault = await parts.takeFault(event.paymentId);
      await credit(ctx.tx, event.paymentId, instance);
      if (fault === 'hold' || fault === 'slow') {
        console.log(`HOLDING ${event.paymentId}`);
        await sleep(fault === 'hold' ? 3_600_000 : 1_500);
      } else if (fault === 'commit-bomb' && parts.commitBomb !== undefined) {
        await parts.commitBomb(ctx.tx, event.paymentId);
      } else if (fault === 'hang') {
        await sleep(2_500);
        await credit(ctx.tx, event.paymentId, 'late');
      } else if (fault === 'hang-in-sql') {
        await parts.sleepInSql(ctx.tx);
      }
      await sleep(20); // long enough that concurrent deliveries of the payment overlap with this one
    },
  };
}

/**
 * Listens on `port` (0: any) on the loopback, says `LISTENING <port>` on stdout for `AppProcess`, and on
 * SIGTERM closes the server, runs `close` and exits.
 *
 * @example
 * ```ts
 * listenUntilTerm(createServer(app), 0, () => pool.end());
 * ```
 */
export function listenUntilTerm(server: Server, port: number, close: () => Promise<unknown>): void {
  server.listen(port, '127.0.0.1', () => {
    console.log(`LISTENING ${(server.address() as { port: number }).port}`);
  });
  process.on('SIGTERM', () => {
    server.close();
    void close().finally(() => process.exit(0));
  });
}

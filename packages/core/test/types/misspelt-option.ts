// Compiled by `pnpm typecheck` (and read by option-mistakes.test.ts): a misspelt option is reported as
// that option, whatever the store. Without the error on the key, `@ts-expect-error` itself fails to compile.
import { createWebhookHandler, type TransactionalStore } from '../../src/index.js';

interface Tx {
  query(sql: string): Promise<void>;
}
declare const store: TransactionalStore<Tx>;

createWebhookHandler({
  secret: 'whsec_test',
  store,
  // @ts-expect-error: 'onPaymentPayed' does not exist; did you mean 'onPaymentPaid'?
  onPaymentPayed: async () => {},
});

// Spelt right, the store types ctx.tx.
createWebhookHandler({
  secret: 'whsec_test',
  store,
  onPaymentPaid: async (_event, ctx) => {
    await ctx.tx.query('select 1');
  },
});

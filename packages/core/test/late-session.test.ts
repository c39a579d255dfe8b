import { expect, it, vi } from 'vitest';
import { createWebhookHandler, signWebhook, type TransactionalStore } from '../src/index.js';
import { samplePaymentPaidEvent } from '../src/testing/index.js';
import { recordingLogger } from './support/recording-logger.js';

const SECRET = 'whsec_late_session_test';

it('a session that opens after the pipeline gave up is rolled back; a rollback that fails then is no unhandled rejection', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    let rollbacks = 0;
    const store: TransactionalStore<object> = {
      kind: 'transactional',
      begin: () =>
        new Promise((resolve) =>
          setTimeout(
            () =>
              resolve({
                state: 'claimed',
                session: {
                  tx: {},
                  commit: async () => {},
                  rollback: async () => {
                    rollbacks++;
                    throw new Error('the store is down now too');
                  },
                },
              }),
            60,
          ),
        ),
    };
    const handle = createWebhookHandler({
      secret: SECRET,
      store,
      storeTimeoutMs: 10,
      logger: recordingLogger(),
      onPaymentPaid: () => {},
    });
    const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: SECRET });
    const answer = await handle({ method: 'POST', headers, rawBody: body });
    expect(answer.status).toBe(503);
    await vi.waitFor(() => expect(rollbacks).toBe(1));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

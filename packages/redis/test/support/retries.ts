import type { PaymentPaidEvent, WebhookRequest, WebhookResponse } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { retryUntil, type TcpProxy } from '@service-pay/test-kit';
import { expect } from 'vitest';
import { delivery } from './deliveries.js';

type Handle = (request: WebhookRequest) => Promise<WebhookResponse>;

/**
 * The sender retrying `event` until it is answered 200, each try bounded by the pipeline's store timeout and
 * all of them by `deadline` (a client comes back on its own reconnect schedule, which a loaded machine
 * stretches): that answer credits, the next delivery is a duplicate, and the handler ran once for it.
 */
export async function creditedOnceOnRetry(
  after: string,
  handle: Handle,
  runs: ReadonlyMap<string, number>,
  event: PaymentPaidEvent,
  deadline: number,
): Promise<void> {
  const retry = await retryUntil(
    `a 200 ${after}`,
    () => handle(delivery(event)),
    (answer) => answer.status === 200,
    { deadline },
  );
  expect(JSON.parse(retry.body)).toEqual({ received: true });
  expect(JSON.parse((await handle(delivery(event))).body)).toEqual({ received: true, duplicate: true });
  expect(runs.get(event.paymentId)).toBe(1);
}

/**
 * What a killed Redis does now and then, made certain: the client's reconnect reaches the listener before it
 * closes, and the connection is reset while the client's first commands (the ready check, CLIENT SETINFO)
 * are on it. A client that took such a connection for a live one would never try again, and every later
 * command would wait forever (node-redis before 5.11: 503s until the app restarted). Through `proxy`: one
 * payment credited, then every connection cut and the next three handshakes reset; the store must credit
 * the sender's retries once again.
 */
export async function recoversFromResetHandshakes(
  handle: Handle,
  runs: ReadonlyMap<string, number>,
  proxy: TcpProxy,
  deadline: number,
): Promise<void> {
  const before = samplePaymentPaidEvent();
  expect((await handle(delivery(before))).status).toBe(200);
  proxy.resetHandshakes(3);
  proxy.cutAll();
  await creditedOnceOnRetry('after the handshakes were reset', handle, runs, samplePaymentPaidEvent(), deadline);
  expect(runs.get(before.paymentId)).toBe(1);
  expect(proxy.handshakesReset).toBe(3);
}

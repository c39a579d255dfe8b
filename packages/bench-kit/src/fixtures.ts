import { createRequire } from 'node:module';
import type { PaymentPaidEvent } from '@service-pay/core';

// The one bench delivery (bench-event.cjs), shared with the icount scripts and the adapter load.
const shared = createRequire(import.meta.url)('./bench-event.cjs') as typeof import('./bench-event.cjs');

export const SECRET: string = shared.SECRET;

let n = 0;
/** A realistic payment.paid event (about 330 bytes of JSON) with a unique payment id. */
export function benchEvent(): PaymentPaidEvent {
  n++;
  return shared.benchEvent(n);
}

export interface SignedDelivery {
  body: Buffer;
  text: string;
  headers: Record<string, string>;
}

/** `count` signed deliveries of distinct payments, bodies as Buffers the way Node servers receive them. */
export function signedDeliveries(count: number): SignedDelivery[] {
  return Array.from({ length: count }, () => {
    n++;
    const { body, headers } = shared.signedBenchEvent(n);
    return { body: Buffer.from(body), text: body, headers };
  });
}

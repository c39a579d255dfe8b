// Signed deliveries for the icount scripts: made before any measured loop, the same whatever K is. The
// delivery itself is the one every benchmark sends (@service-pay/bench-kit's bench-event.cjs).
import { SECRET, signedBenchEvent } from '@service-pay/bench-kit/bench-event';

export { SECRET };

/**
 * `count` signed deliveries of distinct payments (about 330 bytes of JSON each), bodies as Buffers. With
 * `eventType`, the same payload under another event type: authentic, verified, then acknowledged unhandled.
 */
export function deliveries(count, eventType = 'payment.paid') {
  return Array.from({ length: count }, (_, i) => {
    const { body, headers } = signedBenchEvent(i, '', eventType, `dl_bench${i}`);
    return { body: Buffer.from(body), headers };
  });
}

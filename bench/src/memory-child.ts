import { createHash, randomUUID } from 'node:crypto';
import { benchEvent } from '@service-pay/bench-kit';
import { MemoryDedupeStore, type PaymentPaidEvent } from '@service-pay/core';

// Mirrors what the pipeline stores per payment: key `payment.paid:<paymentId>` (a 20-character id), an
// 11-character fingerprint (as core's fingerprintOf makes), a token while claimed (a 32-bit tag of it once
// completed).
const count = Number(process.argv[2]);
const gc = globalThis.gc as () => void;
const template: PaymentPaidEvent = benchEvent();

gc();
gc();
const before = process.memoryUsage().heapUsed;
const store = new MemoryDedupeStore({ maxEntries: count });
for (let i = 0; i < count; i++) {
  const key = `payment.paid:p_${i.toString(36).padStart(8, '0')}${template.paymentId.slice(-12)}`;
  const token = randomUUID();
  // 11 characters: V8 copies a slice that short instead of keeping the whole digest alive.
  const fingerprint = createHash('sha256').update(key).digest('base64url').slice(0, 11);
  await store.claim(key, token, fingerprint, 60_000);
  await store.complete(key, token, 7 * 24 * 3600 * 1000, fingerprint);
}
gc();
gc();
const after = process.memoryUsage().heapUsed;
if (store.size !== count) throw new Error(`store holds ${store.size}, expected ${count}`);
process.send?.((after - before) / count);

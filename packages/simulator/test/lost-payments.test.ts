import { startServer } from '@service-pay/test-kit';
import { describeLost, describeSlowest, lostKinds, lostPayments, slowestAck } from '@service-pay/test-kit/fault-rows';
import { afterEach, describe, expect, it } from 'vitest';
import { generateMerchant, startSimulator } from '../src/index.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((f) => f()));
});

/** A receiver that answers every request with `status` and `body`, crediting nothing. */
async function answering(status: number, body: string) {
  const server = await startServer((_req, res) => void res.writeHead(status).end(body));
  cleanup.push(() => server.close());
  return `${server.url}/webhook`;
}

// The fault rows read a real sender's log to say why a payment has no credit: these are the two stories
// they must tell apart (and a third the store's inbox tells).
describe("the fault rows' diagnosis of payments without a credit, from the simulator's delivery log", () => {
  it('tells an app that acknowledged without crediting from a sender that gave up after refusals', async () => {
    const sim = await startSimulator({
      merchants: [generateMerchant()],
      retry: { maxAttempts: 8, baseDelayMs: 2, factor: 2, timeoutMs: 1_000 },
    });
    cleanup.push(() => sim.stop());
    const acknowledging = await answering(200, '{"received":true}');
    const refusing = await answering(503, '{"error":"STORE_UNAVAILABLE"}');
    const pay = async (url: string) => {
      const { paymentId } = sim.createPayment({ orderNo: `order-${Math.random()}`, notifyUrl: url });
      await sim.pay(paymentId, { duplicates: 0, concurrent: false, deliverTo: [url] });
      return paymentId;
    };
    const acked = await pay(acknowledging);
    const refused = await pay(refusing);
    const refusedWithInbox = await pay(refusing);
    const credited = await pay(acknowledging);
    await sim.waitForIdle({ timeoutMs: 10_000 });

    const ids = [acked, refused, refusedWithInbox, credited];
    const lost = lostPayments(
      ids,
      new Map([[credited, 1]]),
      (id) => sim.deliveries({ paymentId: id }),
      new Map([[refusedWithInbox, [{ outcome: 'credited', deliveryId: 'dl_x' }]]]),
    );

    expect(lost.map((p) => [p.paymentId, p.kind, p.acknowledged, p.refusals])).toEqual([
      [acked, 'acknowledged-without-credit', 1, 0],
      [refused, 'sender-gave-up', 0, 8],
      [refusedWithInbox, 'inbox-without-credit', 0, 8],
    ]);
    expect(lostKinds(lost)).toEqual({
      'acknowledged-without-credit': 1,
      'sender-gave-up': 1,
      'inbox-without-credit': 1,
    });
    const text = describeLost(lost, [{ what: 'crash', at: Date.now() - 1_000 }]);
    expect(text).toContain(`LOST ${acked}: ACKNOWLEDGED WITHOUT CREDIT (1 x 2xx, 0 refused); inbox: none`);
    expect(text).toContain(
      `LOST ${refused}: sender gave up after 8 refusals, 8 of them after the fault ended; inbox: none`,
    );
    expect(text).toContain(`LOST ${refusedWithInbox}: INBOX ROW WITHOUT CREDIT (8 refused); inbox: credited by dl_x`);
    // Each attempt with its answer, numbered; the refused ones with the code from the body.
    expect(text.match(/#\d \S+ \(-?\d+\.\d s after the fault\) 503 STORE_UNAVAILABLE in \d+ ms/g)).toHaveLength(16);
    expect(text).not.toContain(credited);
    // A fault that outlasted every attempt: the retries ran out during it, which the verdict says.
    const outlasted = describeLost(lost, [
      { what: 'app killed', at: 0 },
      { what: 'listening again', at: Date.now() + 1_000 },
    ]);
    expect(outlasted).toContain(
      `LOST ${refused}: sender gave up after 8 refusals, every attempt before the fault ended: the retries ran out during the fault; inbox: none`,
    );
  });

  it('shows the delivery that came closest to the sender giving up', async () => {
    const sim = await startSimulator({ merchants: [generateMerchant()], retry: { baseDelayMs: 2, timeoutMs: 1_000 } });
    cleanup.push(() => sim.stop());
    let requests = 0;
    const server = await startServer((_req, res) => {
      requests += 1;
      if (requests <= 6) res.writeHead(409).end('{"error":"DELIVERY_IN_PROGRESS"}');
      else res.writeHead(200).end('{"received":true}');
    });
    cleanup.push(() => server.close());
    const url = `${server.url}/webhook`;
    const { paymentId } = sim.createPayment({ orderNo: 'order-slow', notifyUrl: url });
    await sim.pay(paymentId, { duplicates: 0, concurrent: false, deliverTo: [url] });
    await sim.waitForIdle({ timeoutMs: 10_000 });
    const deliveries = sim.deliveries({ paymentId });

    expect(slowestAck(deliveries)).toBe(7);
    const text = describeSlowest(deliveries);
    expect(text).toContain(`SLOWEST ${paymentId}: answered 2xx at attempt 7`);
    expect(text.match(/409 DELIVERY_IN_PROGRESS/g)).toHaveLength(6);
    expect(text).toMatch(/#7 \S+ 200 in \d+ ms/);
    // Below the threshold it stays quiet.
    expect(describeSlowest(deliveries, [], 8)).toBe('');
  });

  it('says nothing when every payment has its credit', async () => {
    const sim = await startSimulator({ merchants: [generateMerchant()], retry: { baseDelayMs: 2 } });
    cleanup.push(() => sim.stop());
    const url = await answering(200, '{"received":true}');
    const { paymentId } = sim.createPayment({ orderNo: 'order-credited', notifyUrl: url });
    await sim.pay(paymentId, { duplicates: 0, concurrent: false, deliverTo: [url] });
    await sim.waitForIdle({ timeoutMs: 10_000 });
    const lost = lostPayments(
      [paymentId],
      new Map([[paymentId, 1]]),
      (id) => sim.deliveries({ paymentId: id }),
      undefined,
    );
    expect(lost).toEqual([]);
    expect(lostKinds(lost)).toEqual({});
    expect(describeLost(lost)).toBe('');
  });
});

import { generateMerchant, type Simulator, startSimulator } from '@service-pay/simulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ShopConfig, simulatorShopConfig } from '../src/index.ts';

/** A running example shop, however its framework starts it. */
export interface RunningShop {
  /** Base URL, e.g. http://127.0.0.1:3000. */
  url: string;
  close: () => Promise<void>;
}

/** Starts the shop against the simulator; `config` holds the simulator's URL and the merchant's keys. */
export type StartShop = (config: ShopConfig) => Promise<RunningShop>;

/**
 * The scenarios every example shop must pass, over real HTTP both ways: the simulator pays, the shop's
 * framework adapter receives the webhook, the shop credits its database once.
 */
export function describeShop(name: string, startShop: StartShop): void {
  describe(name, () => {
    let sim: Simulator;
    let shop: RunningShop;

    beforeAll(async () => {
      const merchant = generateMerchant();
      sim = await startSimulator({ merchants: [merchant], retry: { baseDelayMs: 50 } });
      shop = await startShop(simulatorShopConfig(sim.url, merchant));
    });

    afterAll(async () => {
      await shop?.close();
      await sim?.stop();
    });

    async function placeOrder(amount: string, tokenSymbol = 'USDT') {
      const res = await fetch(`${shop.url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount, tokenSymbol }),
      });
      expect(res.status).toBe(201);
      return (await res.json()) as { order: { id: string }; paymentId: string };
    }

    const order = async (id: string) =>
      (await (await fetch(`${shop.url}/orders/${id}`)).json()) as { status: string; credits: number };

    it('credits a paid order once', async () => {
      const placed = await placeOrder('42.00');
      expect(await order(placed.order.id)).toMatchObject({ status: 'PENDING', credits: 0 });
      await sim.pay(placed.paymentId);
      await sim.waitForIdle();
      expect(await order(placed.order.id)).toMatchObject({ status: 'PAID', credits: 1 });
    });

    it('credits once through duplicates, concurrent duplicates and dropped answers', async () => {
      const placed = await Promise.all([placeOrder('1.50'), placeOrder('2.50'), placeOrder('3.50')]);
      await Promise.all([
        sim.pay(placed[0]!.paymentId, { duplicates: 3 }),
        sim.pay(placed[1]!.paymentId, { duplicates: 5, concurrent: true }),
        sim.pay(placed[2]!.paymentId, { dropResponses: 2, duplicates: 1 }),
      ]);
      await sim.waitForIdle();
      for (const p of placed) expect(await order(p.order.id)).toMatchObject({ status: 'PAID', credits: 1 });
      const attempts = sim.deliveries({ paymentId: placed[2]!.paymentId })[0]?.attempts;
      expect(attempts?.map((a) => a.outcome)).toEqual(['dropped', 'dropped', 'succeeded']);
    });

    it('rejects an underpayment for good: not credited, and the sender stops at once', async () => {
      const underpaid = await placeOrder('100.00');
      await sim.pay(underpaid.paymentId, { amount: '99.99' });
      await sim.waitForIdle();
      expect(await order(underpaid.order.id)).toMatchObject({ status: 'REJECTED', credits: 0 });
      const [delivery] = sim.deliveries({ paymentId: underpaid.paymentId });
      expect(delivery?.attempts).toHaveLength(1);
      expect(delivery?.attempts[0]?.responseBody).toContain('"rejected":true');
    });

    it('refuses a bad order with a coded 400, and an unknown order with 404', async () => {
      const res = await fetch(`${shop.url}/orders`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 12.5, tokenSymbol: 'USDT' }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('INVALID_ORDER');
      expect((await fetch(`${shop.url}/orders/nope`)).status).toBe(404);
    });

    it('answers a forged webhook 401 and credits nothing', async () => {
      const placed = await placeOrder('5.00');
      const res = await fetch(`${shop.url}/webhooks/service`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-service-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`,
        },
        body: JSON.stringify({ event: 'payment.paid', paymentId: placed.paymentId, orderNo: placed.order.id }),
      });
      expect(res.status).toBe(401);
      expect(await order(placed.order.id)).toMatchObject({ status: 'PENDING', credits: 0 });
    });
  });
}

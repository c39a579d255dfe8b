import { createWebhookHandler, signWebhook } from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { shopTelemetry } from '../src/index.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('shop telemetry (SHOP_OTEL_CONSOLE)', () => {
  it('is off by default: no onOutcome is added', async () => {
    const telemetry = shopTelemetry({});
    expect(telemetry.options).toEqual({});
    await telemetry.close();
  });

  it('with SHOP_OTEL_CONSOLE=1, prints each delivery span and, at close, the metrics', async () => {
    const printed: unknown[] = [];
    vi.spyOn(console, 'dir').mockImplementation((value: unknown) => {
      printed.push(value);
    });
    const telemetry = shopTelemetry({ SHOP_OTEL_CONSOLE: '1' });
    const secret = 'whsec_shop_kit_telemetry_0123';
    const handle = createWebhookHandler({ ...telemetry.options, secret, onPaymentPaid: () => {} });
    const event = samplePaymentPaidEvent();
    const { body, headers } = signWebhook({ event, secret });
    expect((await handle({ method: 'POST', headers, rawBody: body })).status).toBe(200);
    await telemetry.close();
    const text = JSON.stringify(printed);
    expect(printed).toContainEqual(
      expect.objectContaining({
        name: 'service_pay.delivery',
        attributes: expect.objectContaining({
          'service_pay.outcome': 'credited',
          'service_pay.payment_id': event.paymentId,
        }),
      }),
    );
    expect(text).toContain('service_pay.deliveries');
    expect(text).toContain('service_pay.delivery.duration');
  });
});

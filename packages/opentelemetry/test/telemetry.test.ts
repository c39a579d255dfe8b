import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, metrics, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  createReconciler,
  createWebhookHandler,
  MemoryDedupeStore,
  type Outcome,
  signWebhook,
  type WebhookRequest,
} from '@service-pay/core';
import { samplePaymentPaidEvent } from '@service-pay/core/testing';
import { serviceWebhook } from '@service-pay/express';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { DURATION_BUCKETS_SEC, serviceWebhookTelemetry, TELEMETRY_NAMES } from '../src/index.js';

const SECRET = 'whsec_telemetry_test_0123456789';
const { metrics: M, attributes: A } = TELEMETRY_NAMES;

/** A MeterProvider and a TracerProvider exporting to the SDK's in-memory exporters. */
function sdk() {
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  /** The last export of one metric: its descriptor and data points (cumulative). */
  const metric = async (name: string) => {
    await reader.forceFlush();
    const last = metricExporter.getMetrics().at(-1);
    const found = last?.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
    return { descriptor: found?.descriptor, points: (found?.dataPoints ?? []) as DataPoint<unknown>[] };
  };
  const spans = () => spanExporter.getFinishedSpans();
  const shutdown = async () => {
    await meterProvider.shutdown();
    await tracerProvider.shutdown();
  };
  return { meterProvider, tracerProvider, metric, spans, shutdown };
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function delivery(event = samplePaymentPaidEvent(), headers: Record<string, string | undefined> = {}): WebhookRequest {
  const signed = signWebhook({ event, secret: SECRET });
  return { method: 'POST', headers: { ...signed.headers, ...headers }, rawBody: signed.body };
}

/** The value of a counter point, or the count and sum of a histogram point, whose attributes match. */
function pointWith(points: DataPoint<unknown>[], attributes: Record<string, unknown>) {
  const matching = points.filter((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v));
  return matching;
}

const seconds = ([s, ns]: [number, number]) => s + ns / 1e9;

describe('serviceWebhookTelemetry through a real handler', () => {
  it('counts every outcome by outcome, code and source, times deliveries and handlers in seconds, and spans each', async () => {
    const otel = sdk();
    cleanups.push(otel.shutdown);
    const seen: Outcome[] = [];
    const handle = createWebhookHandler({
      ...serviceWebhookTelemetry({
        meterProvider: otel.meterProvider,
        tracerProvider: otel.tracerProvider,
        onOutcome: (o) => {
          seen.push(o);
        },
      }),
      secret: SECRET,
      logger: { warn: () => {}, error: () => {} },
      onPaymentPaid: async (event) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (event.orderNo.startsWith('fail')) throw new Error('database down');
      },
    });
    const paid = samplePaymentPaidEvent();
    expect((await handle(delivery(paid))).status).toBe(200);
    expect((await handle(delivery(paid))).status).toBe(200); // duplicate
    expect((await handle(delivery(undefined, { 'x-service-signature': undefined }))).status).toBe(401);
    expect((await handle(delivery(samplePaymentPaidEvent({ orderNo: 'fail-1' })))).status).toBe(500);
    expect((await handle(delivery({ ...paid, amount: '99.00', amountRaw: '99000000' }))).status).toBe(422);

    const deliveries = await otel.metric(M.deliveries);
    expect(deliveries.descriptor).toMatchObject({ unit: '{delivery}' });
    const count = (attributes: Record<string, unknown>) =>
      pointWith(deliveries.points, attributes).reduce((n, p) => n + (p.value as number), 0);
    expect(count({ [A.outcome]: 'credited', [A.source]: 'webhook' })).toBe(1);
    expect(count({ [A.outcome]: 'duplicate' })).toBe(1);
    expect(count({ [A.outcome]: 'refused', [A.code]: 'MISSING_SIGNATURE' })).toBe(1);
    expect(count({ [A.outcome]: 'failed', [A.code]: 'HANDLER_FAILED' })).toBe(1);
    expect(count({ [A.outcome]: 'conflict', [A.code]: 'PAYLOAD_CONFLICT' })).toBe(1);
    expect(count({})).toBe(5);
    // Never a payment or delivery id on a metric: they would make one series per payment.
    for (const p of deliveries.points) expect(Object.keys(p.attributes).sort()).not.toContain(A.paymentId);

    const durations = await otel.metric(M.deliveryDuration);
    expect(durations.descriptor).toMatchObject({ unit: 's' });
    const histogram = (p: DataPoint<unknown>) => p.value as Histogram;
    expect(durations.points.reduce((n, p) => n + histogram(p).count, 0)).toBe(5);
    expect(histogram(durations.points[0] as DataPoint<unknown>).buckets.boundaries).toEqual(DURATION_BUCKETS_SEC);
    // The same durations the hook saw, in seconds.
    const totalSec = seen.reduce((sum, o) => sum + o.durationMs / 1000, 0);
    expect(durations.points.reduce((sum, p) => sum + (histogram(p).sum ?? 0), 0)).toBeCloseTo(totalSec, 6);

    const handlerDurations = await otel.metric(M.handlerDuration);
    expect(handlerDurations.descriptor).toMatchObject({ unit: 's' });
    const handlerPoints = handlerDurations.points.map((p) => [p.attributes[A.outcome], histogram(p).count]);
    expect(handlerPoints.sort()).toEqual([
      ['credited', 1],
      ['failed', 1],
    ]);
    const credited = seen.find((o) => o.outcome === 'credited') as Outcome;
    const creditedHandler = pointWith(handlerDurations.points, { [A.outcome]: 'credited' })[0];
    expect(histogram(creditedHandler as DataPoint<unknown>).sum).toBeCloseTo((credited.handlerMs as number) / 1000, 6);

    const spans = otel.spans();
    expect(spans.map((s) => s.name)).toEqual(Array(5).fill('service_pay.delivery'));
    const [ok, duplicate, refused, failed, conflict] = spans as [
      ReadableSpan,
      ReadableSpan,
      ReadableSpan,
      ReadableSpan,
      ReadableSpan,
    ];
    expect(ok.attributes).toMatchObject({
      [A.outcome]: 'credited',
      [A.source]: 'webhook',
      [A.paymentId]: paid.paymentId,
      [A.deliveryId]: credited.deliveryId,
      'http.response.status_code': 200,
    });
    expect(ok.status.code).toBe(SpanStatusCode.UNSET);
    // Built from the outcome: it lasts exactly the delivery's duration.
    expect(seconds(ok.duration)).toBeCloseTo(credited.durationMs / 1000, 5);
    expect(duplicate.attributes[A.outcome]).toBe('duplicate');
    expect(refused.attributes).toMatchObject({ [A.outcome]: 'refused', [A.code]: 'MISSING_SIGNATURE' });
    expect(refused.attributes[A.paymentId]).toBeUndefined(); // never before the signature passed
    expect(refused.status.code).toBe(SpanStatusCode.UNSET); // the sender's problem, not the merchant's
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: 'HANDLER_FAILED' });
    expect(failed.attributes['error.type']).toBe('HANDLER_FAILED');
    expect(conflict.status).toEqual({ code: SpanStatusCode.ERROR, message: 'PAYLOAD_CONFLICT' });
    expect(seen.map((o) => o.outcome)).toEqual(['credited', 'duplicate', 'refused', 'failed', 'conflict']);
  });

  it('keeps recording when your own onOutcome throws; the core logs that hook, the answer is unchanged', async () => {
    const otel = sdk();
    cleanups.push(otel.shutdown);
    const errors: string[] = [];
    const handle = createWebhookHandler({
      ...serviceWebhookTelemetry({
        meterProvider: otel.meterProvider,
        tracerProvider: otel.tracerProvider,
        onOutcome: () => {
          throw new Error('audit sink down');
        },
      }),
      secret: SECRET,
      logger: { warn: () => {}, error: (_fields, message) => errors.push(message) },
      onPaymentPaid: () => {},
    });
    expect((await handle(delivery())).status).toBe(200);
    const { points } = await otel.metric(M.deliveries);
    expect(points.map((p) => [p.attributes[A.outcome], p.value])).toEqual([['credited', 1]]);
    expect(otel.spans()).toHaveLength(1);
    expect(errors).toEqual(['onOutcome threw; the answer is unchanged.']);
  });

  it('reports the ledger: an entry opened, failed again and closed, on the counter and the spans', async () => {
    const otel = sdk();
    cleanups.push(otel.shutdown);
    let broken = true;
    const handle = createWebhookHandler({
      ...serviceWebhookTelemetry({ meterProvider: otel.meterProvider, tracerProvider: otel.tracerProvider }),
      secret: SECRET,
      logger: { warn() {}, error() {} },
      store: new MemoryDedupeStore(),
      onPaymentPaid: () => {
        if (broken) throw new Error('broken');
      },
    });
    const event = samplePaymentPaidEvent();
    expect((await handle(delivery(event))).status).toBe(500);
    expect((await handle(delivery(event))).status).toBe(500);
    broken = false;
    expect((await handle(delivery(event))).status).toBe(200);
    const { points } = await otel.metric(M.ledgerChanges);
    const byChange = points.map((p) => [p.attributes[A.ledgerChange], p.value]).sort();
    expect(byChange).toEqual([
      ['closed', 1],
      ['failed', 1],
      ['opened', 1],
    ]);
    const attempts = await otel.metric(M.ledgerAttempts);
    expect(attempts.points.map((p) => (p.value as { max?: number }).max)).toContain(2);
    expect(otel.spans().map((s) => s.attributes[A.ledgerChange])).toEqual(['opened', 'failed', 'closed']);
  });

  it('works for createReconciler: a span and a count per reconciled payment, source reconciliation', async () => {
    const otel = sdk();
    cleanups.push(otel.shutdown);
    const paid = samplePaymentPaidEvent();
    const payments = new Map([
      [paid.paymentId, { ...paid, status: 'PAID' }],
      ['p_pending', { ...samplePaymentPaidEvent({ paymentId: 'p_pending' }), status: 'PENDING' }],
    ]);
    const reconciler = createReconciler({
      ...serviceWebhookTelemetry({ meterProvider: otel.meterProvider, tracerProvider: otel.tracerProvider }),
      getPayment: async (id) => {
        const payment = payments.get(id);
        if (payment === undefined) throw new Error(`no payment ${id}`);
        return payment;
      },
      store: new MemoryDedupeStore(),
      onPaymentPaid: () => {},
    });
    const report = await reconciler.reconcileMany([paid.paymentId, 'p_pending']);
    expect(report.counts).toMatchObject({ credited: 1, 'not-paid': 1 });
    const { points } = await otel.metric(M.deliveries);
    const byOutcome = points.map((p) => [p.attributes[A.outcome], p.attributes[A.source], p.value]).sort();
    expect(byOutcome).toEqual([
      ['credited', 'reconciliation', 1],
      ['ignored', 'reconciliation', 1],
    ]);
    const spans = otel.spans();
    expect(spans.map((s) => s.name)).toEqual(['service_pay.reconciliation', 'service_pay.reconciliation']);
    const credited = spans.find((s) => s.attributes[A.outcome] === 'credited');
    expect(credited?.attributes[A.paymentId]).toBe(paid.paymentId);
    // Not an HTTP request: no HTTP status on its span.
    expect(credited?.attributes['http.response.status_code']).toBeUndefined();
  });

  it('nests each delivery span under the active span of the request (Express, real HTTP)', async () => {
    const otel = sdk();
    cleanups.push(otel.shutdown);
    const contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
    cleanups.push(() => {
      context.disable();
    });
    const tracer = otel.tracerProvider.getTracer('test-http');
    const app = express();
    // What HTTP instrumentation does: a server span, active while the request is handled.
    app.use((_req, res, next) => {
      const span = tracer.startSpan('POST /webhooks/service');
      res.on('finish', () => span.end());
      context.with(trace.setSpan(context.active(), span), next);
    });
    app.post(
      '/webhooks/service',
      serviceWebhook({
        ...serviceWebhookTelemetry({ meterProvider: otel.meterProvider, tracerProvider: otel.tracerProvider }),
        secret: SECRET,
        onPaymentPaid: () => {},
      }),
    );
    const server = createServer(app).listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { body, headers } = signWebhook({ event: samplePaymentPaidEvent(), secret: SECRET });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/service`;
    const response = await fetch(url, { method: 'POST', headers, body });
    expect(response.status).toBe(200);
    await response.text();
    const spans = otel.spans();
    const http = spans.find((s) => s.name === 'POST /webhooks/service');
    const delivery = spans.find((s) => s.name === 'service_pay.delivery');
    expect(delivery?.parentSpanContext?.spanId).toBe(http?.spanContext().spanId);
    expect(delivery?.spanContext().traceId).toBe(http?.spanContext().traceId);
  });

  it('uses the global providers by default, looked up at the first outcome (the SDK may start later)', async () => {
    const otel = sdk();
    cleanups.push(otel.shutdown);
    const options = serviceWebhookTelemetry(); // before any provider is registered
    metrics.setGlobalMeterProvider(otel.meterProvider);
    trace.setGlobalTracerProvider(otel.tracerProvider);
    cleanups.push(() => {
      metrics.disable();
      trace.disable();
    });
    const handle = createWebhookHandler({ ...options, secret: SECRET, onPaymentPaid: () => {} });
    expect((await handle(delivery())).status).toBe(200);
    expect((await otel.metric(M.deliveries)).points.map((p) => p.value)).toEqual([1]);
    expect(otel.spans()).toHaveLength(1);
  });

  it('refuses bad options with INVALID_OPTIONS', () => {
    for (const bad of [
      { meterProvider: {} },
      { tracerProvider: 'global' },
      { onOutcome: 'log' },
      null,
    ] as unknown as Parameters<typeof serviceWebhookTelemetry>[0][]) {
      expect(() => serviceWebhookTelemetry(bad)).toThrowError(expect.objectContaining({ code: 'INVALID_OPTIONS' }));
    }
  });
});

import {
  type Attributes,
  type Counter,
  type Histogram,
  type Meter,
  SpanKind,
  SpanStatusCode,
  type Tracer,
} from '@opentelemetry/api';
import type { Outcome, OutcomeKind } from '@service-pay/core';
import { DURATION_BUCKETS_SEC, TELEMETRY_NAMES } from './names.js';

const { metrics: METRICS, spans: SPANS, attributes: ATTR } = TELEMETRY_NAMES;

/**
 * The outcomes a span marks as an error: something failed on the merchant's side, a conflict to look at, or
 * a `ctx.tx` write made after its delivery ended (`late-use`: not made).
 * A refusal (401, 400, ...) is the sender's or an attacker's doing, a duplicate or an ignored event is
 * normal, and a rejection is the merchant's own decision, answered 200: their spans stay unset.
 */
const ERROR_OUTCOMES: ReadonlySet<OutcomeKind> = new Set(['failed', 'timeout', 'unavailable', 'conflict', 'late-use']);

/** The instruments, made once per `serviceWebhookTelemetry()` on its meter. */
export interface Instruments {
  deliveries: Counter;
  deliveryDuration: Histogram;
  handlerDuration: Histogram;
  ledgerChanges: Counter;
  ledgerAttempts: Histogram;
}

export function createInstruments(meter: Meter): Instruments {
  const advice = { explicitBucketBoundaries: [...DURATION_BUCKETS_SEC] };
  return {
    deliveries: meter.createCounter(METRICS.deliveries, {
      unit: '{delivery}',
      description: 'Webhook requests and reconciled payments, by outcome, code and source.',
    }),
    deliveryDuration: meter.createHistogram(METRICS.deliveryDuration, {
      unit: 's',
      description: "From a request's arrival (or a reconciliation's start) to its answer.",
      advice,
    }),
    handlerDuration: meter.createHistogram(METRICS.handlerDuration, {
      unit: 's',
      description: 'How long onPaymentPaid ran, when it ran.',
      advice,
    }),
    ledgerChanges: meter.createCounter(METRICS.ledgerChanges, {
      unit: '{entry}',
      description: "The operator's ledger: entries opened, failed again, closed and flagged.",
    }),
    ledgerAttempts: meter.createHistogram(METRICS.ledgerAttempts, {
      unit: '{attempt}',
      description: "A failing payment's failed attempts so far, on each failure.",
      advice: { explicitBucketBoundaries: [1, 2, 3, 4, 5, 6, 7, 8, 10, 20] },
    }),
  };
}

/** One outcome as metrics: a count, the delivery's duration and, when the handler ran, its duration. */
export function recordMetrics(instruments: Instruments, outcome: Outcome): void {
  // Low-cardinality only: never a payment or delivery id on a metric.
  const attributes: Attributes = { [ATTR.outcome]: outcome.outcome, [ATTR.source]: outcome.source };
  if (outcome.code !== undefined) attributes[ATTR.code] = outcome.code;
  instruments.deliveries.add(1, attributes);
  instruments.deliveryDuration.record(outcome.durationMs / 1000, attributes);
  if (outcome.handlerMs !== undefined) instruments.handlerDuration.record(outcome.handlerMs / 1000, attributes);
  const ledger = outcome.ledger;
  if (ledger !== undefined) {
    const changed: Attributes = { [ATTR.ledgerChange]: ledger.change, [ATTR.source]: outcome.source };
    instruments.ledgerChanges.add(1, changed);
    if (ledger.attempts !== undefined && ledger.attempts > 0)
      instruments.ledgerAttempts.record(ledger.attempts, changed);
  }
}

/**
 * One outcome as a span. The core reports an outcome once it is decided, so the span is built after the
 * fact from its duration: it starts `durationMs` before now and ends now, as a child of whatever span is
 * active (the HTTP server span, with HTTP instrumentation on).
 */
export function recordSpan(tracer: Tracer, outcome: Outcome): void {
  const end = Date.now();
  const attributes: Attributes = {
    [ATTR.outcome]: outcome.outcome,
    [ATTR.source]: outcome.source,
  };
  if (outcome.code !== undefined) attributes[ATTR.code] = outcome.code;
  if (outcome.paymentId !== undefined) attributes[ATTR.paymentId] = outcome.paymentId;
  if (outcome.deliveryId !== undefined) attributes[ATTR.deliveryId] = outcome.deliveryId;
  // For a reconciliation the status is only the one a webhook would have got: not an HTTP answer.
  if (outcome.source === 'webhook') attributes['http.response.status_code'] = outcome.status;
  if (outcome.handlerMs !== undefined) attributes[METRICS.handlerDuration] = outcome.handlerMs / 1000;
  if (outcome.ledger !== undefined) {
    attributes[ATTR.ledgerChange] = outcome.ledger.change;
    if (outcome.ledger.attempts !== undefined) attributes[ATTR.ledgerAttempts] = outcome.ledger.attempts;
  }
  const failed = ERROR_OUTCOMES.has(outcome.outcome);
  if (failed) attributes['error.type'] = outcome.code ?? outcome.outcome;
  const span = tracer.startSpan(outcome.source === 'webhook' ? SPANS.delivery : SPANS.reconciliation, {
    kind: SpanKind.INTERNAL,
    startTime: end - outcome.durationMs,
    attributes,
  });
  if (failed) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.code ?? outcome.outcome });
  span.end(end);
}

/**
 * The names this package records under: stable, so dashboards and alerts can rely on them. Metric names
 * follow OpenTelemetry's conventions (dot-separated, a namespace of our own, durations in seconds).
 *
 * @example
 * ```ts
 * import { TELEMETRY_NAMES } from '@service-pay/opentelemetry';
 *
 * const failures = points.filter((p) => p.attributes[TELEMETRY_NAMES.attributes.outcome] === 'failed');
 * ```
 */
export const TELEMETRY_NAMES = Object.freeze({
  /** The instrumentation scope (meter and tracer name). */
  scope: '@service-pay/opentelemetry',
  metrics: Object.freeze({
    /** Counter, unit `{delivery}`: one per request and per reconciled payment. */
    deliveries: 'service_pay.deliveries',
    /** Histogram, unit `s`: from the request's arrival (or the reconciliation's start) to its answer. */
    deliveryDuration: 'service_pay.delivery.duration',
    /** Histogram, unit `s`: how long `onPaymentPaid` ran, when it ran. */
    handlerDuration: 'service_pay.handler.duration',
    /**
     * Counter, unit `{entry}`: the ledger's entries opened (a payment's first failure), failed again, closed
     * (credited since) and flagged, by change; alert on it without reading logs.
     */
    ledgerChanges: 'service_pay.ledger.changes',
    /** Histogram, unit `{attempt}`: a failing entry's failed attempts so far, on each failure. */
    ledgerAttempts: 'service_pay.ledger.attempts',
  }),
  spans: Object.freeze({
    /** One span per webhook request. */
    delivery: 'service_pay.delivery',
    /** One span per reconciled payment. */
    reconciliation: 'service_pay.reconciliation',
  }),
  attributes: Object.freeze({
    /** `credited`, `duplicate`, `rejected`, `ignored`, `in-progress`, `conflict`, `refused`, `failed`, `timeout`, `unavailable`. */
    outcome: 'service_pay.outcome',
    /** The error code (`SIGNATURE_MISMATCH`, `HANDLER_FAILED`, ...), absent when there is none. */
    code: 'service_pay.code',
    /** `webhook` or `reconciliation`. */
    source: 'service_pay.source',
    /** Spans only: set once the signature passed (never for a refused request). */
    paymentId: 'service_pay.payment_id',
    /** Spans only: the sender's `X-Service-Delivery`. */
    deliveryId: 'service_pay.delivery_id',
    /** The ledger entry's change: `opened`, `failed`, `closed` or `flagged`. */
    ledgerChange: 'service_pay.ledger.change',
    /** Spans only: a failing entry's failed attempts so far. */
    ledgerAttempts: 'service_pay.ledger.attempts',
  }),
});

/**
 * The histograms' bucket boundaries in seconds (an advice a view can override): fine below 100 ms, where
 * deliveries usually end, then the marks that matter for this sender: the core warns about a handler at
 * 4 s, the sender gives up at 5 s, and the default `handlerTimeoutMs` is 30 s.
 *
 * @example
 * ```ts
 * new MeterProvider({ views: [{ instrumentName: 'service_pay.*', aggregation: { type: AggregationType.EXPLICIT_BUCKET_HISTOGRAM, options: { boundaries: [...DURATION_BUCKETS_SEC, 60] } } }] });
 * ```
 */
export const DURATION_BUCKETS_SEC: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 4, 5, 10, 30,
]);

import { type MeterProvider, metrics, type Tracer, type TracerProvider, trace } from '@opentelemetry/api';
import { type Outcome, WebhookError } from '@service-pay/core';
import { TELEMETRY_NAMES } from './names.js';
import { createInstruments, type Instruments, recordMetrics, recordSpan } from './record-outcome.js';

/**
 * Options of `serviceWebhookTelemetry`. Every one is optional: by default the global providers that the
 * OpenTelemetry SDK registered are used.
 *
 * @example
 * ```ts
 * const options: ServiceWebhookTelemetryOptions = { meterProvider, tracerProvider, onOutcome: audit };
 * ```
 */
export interface ServiceWebhookTelemetryOptions {
  /** Default: the global one (`metrics.getMeterProvider()`), looked up at the first outcome. */
  meterProvider?: MeterProvider;
  /** Default: the global one (`trace.getTracerProvider()`), looked up at the first outcome. */
  tracerProvider?: TracerProvider;
  /**
   * Your own outcome hook, called after the telemetry is recorded. Pass it here rather than beside the
   * spread: a second `onOutcome` key in the handler options would replace this package's.
   */
  onOutcome?: (outcome: Outcome) => void | Promise<void>;
}

/**
 * The handler options `serviceWebhookTelemetry` gives: an `onOutcome` to spread into the options of any
 * handler, adapter or reconciler.
 *
 * @example
 * ```ts
 * const { onOutcome }: ServiceWebhookTelemetry = serviceWebhookTelemetry();
 * ```
 */
export interface ServiceWebhookTelemetry {
  onOutcome: (outcome: Outcome) => void | Promise<void>;
}

/**
 * Turns the pipeline's outcomes into OpenTelemetry metrics and spans. Spread the result into the options of
 * a handler, an adapter or `createReconciler`; each makes its own instruments on first use:
 * - `service_pay.deliveries` (counter, `{delivery}`) by `service_pay.outcome`, `service_pay.code`, `service_pay.source`;
 * - `service_pay.delivery.duration` and `service_pay.handler.duration` (histograms, seconds), same attributes;
 * - a `service_pay.delivery` (or `service_pay.reconciliation`) span per outcome, with outcome, code, payment
 *   and delivery id, and an error status for `failed`, `timeout`, `unavailable` and `conflict`.
 *
 * Recording never changes an answer: the core catches and logs a hook that throws.
 *
 * @example
 * ```ts
 * import { serviceWebhookTelemetry } from '@service-pay/opentelemetry';
 * import { serviceWebhook } from '@service-pay/express';
 *
 * app.post('/webhooks/service', serviceWebhook({
 *   ...serviceWebhookTelemetry({ onOutcome: (o) => audit.write(o) }),
 *   secret: process.env.SERVICE_WEBHOOK_SECRET!,
 *   onPaymentPaid,
 * }));
 * ```
 */
export function serviceWebhookTelemetry(options: ServiceWebhookTelemetryOptions = {}): ServiceWebhookTelemetry {
  const { meterProvider, tracerProvider, onOutcome: own } = checkOptions(options);
  // Looked up at the first outcome, not now: an app often builds its handler options before it starts the
  // OpenTelemetry SDK, and the global meter provider is not a proxy that would catch up later.
  let instruments: Instruments | undefined;
  let tracer: Tracer | undefined;
  return {
    onOutcome: (outcome) => {
      let failure: { error: unknown } | undefined;
      try {
        instruments ??= createInstruments(
          (meterProvider ?? metrics.getMeterProvider()).getMeter(TELEMETRY_NAMES.scope),
        );
        tracer ??= (tracerProvider ?? trace.getTracerProvider()).getTracer(TELEMETRY_NAMES.scope);
        recordMetrics(instruments, outcome);
        recordSpan(tracer, outcome);
      } catch (error) {
        failure = { error };
      }
      // The user's hook runs even if recording failed; the core then logs the failure.
      const result = own?.(outcome);
      if (failure !== undefined) throw failure.error;
      return result;
    },
  };
}

function checkOptions(options: ServiceWebhookTelemetryOptions): ServiceWebhookTelemetryOptions {
  const problem = (what: string) => new WebhookError('INVALID_OPTIONS', `serviceWebhookTelemetry: ${what}`);
  if (options === null || typeof options !== 'object') throw problem('options must be an object.');
  const { meterProvider, tracerProvider, onOutcome } = options;
  if (meterProvider !== undefined && typeof meterProvider?.getMeter !== 'function') {
    throw problem('meterProvider must be an OpenTelemetry MeterProvider (it has no getMeter).');
  }
  if (tracerProvider !== undefined && typeof tracerProvider?.getTracer !== 'function') {
    throw problem('tracerProvider must be an OpenTelemetry TracerProvider (it has no getTracer).');
  }
  if (onOutcome !== undefined && typeof onOutcome !== 'function') throw problem('onOutcome must be a function.');
  return options;
}

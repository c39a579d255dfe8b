import { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { HandlerOptions } from '@service-pay/core';
import { serviceWebhookTelemetry } from '@service-pay/opentelemetry';

/** The webhook options that add telemetry, and how to flush and stop it. */
export interface ShopTelemetry {
  options: Pick<HandlerOptions, 'onOutcome'>;
  close: () => Promise<void>;
}

/**
 * OpenTelemetry for the shop's webhook, off by default. With `SHOP_OTEL_CONSOLE=1` every delivery's span is
 * printed as it ends and the metrics every 10 s (and at close), by the SDK's console exporters; a real app
 * would register an OTLP exporter instead, or let the Node SDK set the global providers and spread
 * `serviceWebhookTelemetry()` with no providers at all.
 */
export function shopTelemetry(env: NodeJS.ProcessEnv = process.env): ShopTelemetry {
  if (env.SHOP_OTEL_CONSOLE !== '1') return { options: {}, close: async () => {} };
  const meterProvider = new MeterProvider({
    readers: [
      new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter(), exportIntervalMillis: 10_000 }),
    ],
  });
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())],
  });
  return {
    options: serviceWebhookTelemetry({ meterProvider, tracerProvider }),
    close: async () => {
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
    },
  };
}

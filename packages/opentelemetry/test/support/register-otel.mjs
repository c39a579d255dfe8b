// Preloaded (`node --import`) by the README test: what a merchant's OpenTelemetry SDK setup does (global
// meter and tracer providers), with the SDK's in-memory exporters. On SIGTERM it prints what was recorded.
import { metrics, trace } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
const spanExporter = new InMemorySpanExporter();
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] }));

process.on('SIGTERM', async () => {
  await reader.forceFlush();
  const last = metricExporter.getMetrics().at(-1);
  const recorded = {
    metrics: (last?.scopeMetrics ?? []).flatMap((scope) =>
      scope.metrics.map((m) => ({
        name: m.descriptor.name,
        unit: m.descriptor.unit,
        points: m.dataPoints.map((p) => p.attributes),
      })),
    ),
    spans: spanExporter.getFinishedSpans().map((s) => ({ name: s.name, attributes: s.attributes })),
  };
  process.stdout.write(`${JSON.stringify(recorded)}\n`);
  process.exit(0);
});

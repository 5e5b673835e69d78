import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtobufMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { VERSION } from '../version.js';
import { AllowedAttributesExporter, MAX_SPAN_EVENTS, MAX_SPAN_LINKS } from './allowed-attributes-exporter.js';
import { MAX_ATTRIBUTE_TEXT } from './attributes.js';
import { type PrometheusMetric, prometheusToOtlp } from './prometheus-bridge.js';
import type { SamplerName, TelemetrySettings } from './settings.js';

/** What the SDK started: flushed and stopped by the process on its way out. */
export interface StartedSdk {
  /** exports the /metrics registry's series over OTLP, read through `collect` at each interval */
  exportMetrics(collect: () => Promise<PrometheusMetric[]>): void;
  /** sends what is buffered now (spans, and the metrics as of now) */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry SDK as `settings` ask: the tracer provider (spans batched, filtered by
 * the allow-list, sent over OTLP/HTTP), the AsyncLocalStorage context manager and the W3C trace
 * context propagator (no baggage: nothing of ours travels in it). Loaded only when a signal is on.
 */
export function startSdk(settings: TelemetrySettings): StartedSdk {
  const resource = resourceFromAttributes({
    ...settings.resourceAttributes,
    'service.name': settings.serviceName,
    'service.version': VERSION,
  });
  const common = { headers: settings.headers, timeoutMillis: settings.timeoutMs };
  let tracerProvider: TracerProvider | undefined;
  if (settings.traces) {
    const url = settings.tracesEndpoint;
    const exporter =
      settings.protocol === 'http/json' ? new JsonTraceExporter({ url, ...common }) : new ProtobufTraceExporter({ url, ...common });
    tracerProvider = new TracerProvider({
      resource,
      sampler: samplerOf(settings.sampler, settings.samplerRatio),
      spanLimits: {
        attributeValueLengthLimit: MAX_ATTRIBUTE_TEXT,
        attributeCountLimit: 64,
        eventCountLimit: MAX_SPAN_EVENTS,
        linkCountLimit: MAX_SPAN_LINKS,
      },
      spanProcessors: [new BatchSpanProcessor({ exporter: new AllowedAttributesExporter(exporter) })],
    });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(tracerProvider);
  }
  let meterProvider: MeterProvider | undefined;
  return {
    exportMetrics(collect) {
      if (!settings.metrics || meterProvider) return;
      const url = settings.metricsEndpoint;
      const exporter =
        settings.protocol === 'http/json' ? new JsonMetricExporter({ url, ...common }) : new ProtobufMetricExporter({ url, ...common });
      const startTime = hrTime(Date.now());
      const reader = new PeriodicExportingMetricReader({
        exporter,
        exportIntervalMillis: settings.metricIntervalMs,
        exportTimeoutMillis: Math.min(settings.timeoutMs, settings.metricIntervalMs),
        metricProducers: [
          {
            collect: async () => ({
              resourceMetrics: {
                resource,
                scopeMetrics: [
                  {
                    scope: { name: 'intake-sync', version: VERSION },
                    metrics: prometheusToOtlp(await collect(), startTime, hrTime(Date.now())),
                  },
                ],
              },
              errors: [],
            }),
          },
        ],
      });
      meterProvider = new MeterProvider({ resource, readers: [reader] });
    },
    async flush() {
      await Promise.all([tracerProvider?.forceFlush(), meterProvider?.forceFlush()]);
    },
    async shutdown() {
      await Promise.allSettled([tracerProvider?.shutdown(), meterProvider?.shutdown()]);
    },
  };
}

function samplerOf(name: SamplerName, ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

function hrTime(ms: number): [number, number] {
  return [Math.floor(ms / 1000), (ms % 1000) * 1_000_000];
}

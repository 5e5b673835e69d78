import type { PrometheusMetric } from './prometheus-bridge.js';
import type { TelemetrySettings } from './settings.js';
import type { StartedSdk } from './sdk.js';

/** The process's telemetry: what started (nothing, by default) and how to end it. */
export interface Telemetry {
  /** whether spans are exported (the SDK is loaded) */
  readonly tracing: boolean;
  /** hands the /metrics registry to the OTLP metrics exporter (nothing when OTEL_METRICS_EXPORTER is not otlp) */
  exportMetrics(collect: () => Promise<PrometheusMetric[]>): void;
  /** sends what is buffered now */
  flush(): Promise<void>;
  /** flushes what is buffered and stops the exporters */
  shutdown(): Promise<void>;
}

const OFF: Telemetry = { tracing: false, exportMetrics: () => {}, flush: async () => {}, shutdown: async () => {} };
let current: Telemetry = OFF;

/**
 * Starts what `settings` ask for. Both signals off (the default): nothing is imported, so the SDK
 * costs neither memory nor start-up time; the instrumentation's calls go to the API's no-op tracer.
 * Once per process: a second call returns the first one's telemetry.
 */
export async function startTelemetry(settings: TelemetrySettings): Promise<Telemetry> {
  if (current !== OFF || (!settings.traces && !settings.metrics)) return current;
  const { startSdk } = await import('./sdk.js');
  const sdk: StartedSdk = startSdk(settings);
  current = {
    tracing: settings.traces,
    exportMetrics: (collect) => sdk.exportMetrics(collect),
    flush: () => sdk.flush(),
    shutdown: () => sdk.shutdown(),
  };
  return current;
}

/** The telemetry this process started (the off one until startTelemetry switched something on). */
export function processTelemetry(): Telemetry {
  return current;
}

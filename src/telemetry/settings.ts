/** The samplers OTEL_TRACES_SAMPLER names (the specification's list, minus the vendor ones). */
export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** The OTLP encodings over HTTP this build exports with (gRPC is not shipped: the Collector listens on 4318 for these). */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/**
 * What the OTEL_* variables ask for, validated by src/config (telemetry-env.ts). Both signals off is
 * the default: then nothing of the SDK is loaded (start.ts).
 */
export interface TelemetrySettings {
  /** export spans: OTEL_TRACES_EXPORTER=otlp, or an OTLP endpoint given without it */
  traces: boolean;
  /** export the /metrics series over OTLP too: OTEL_METRICS_EXPORTER=otlp */
  metrics: boolean;
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, decoded (the operator's own labels: deployment, region) */
  resourceAttributes: Record<string, string>;
  /** full URLs: the signal's own endpoint, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces|metrics */
  tracesEndpoint: string;
  metricsEndpoint: string;
  protocol: OtlpProtocol;
  /** OTEL_EXPORTER_OTLP_HEADERS, decoded (an API key of a hosted backend: never logged) */
  headers: Record<string, string>;
  timeoutMs: number;
  sampler: SamplerName;
  /** OTEL_TRACES_SAMPLER_ARG: the ratio of the traceidratio samplers */
  samplerRatio: number;
  metricIntervalMs: number;
}

/** Nothing exported: the default when no OTEL_* variable asks for a signal. */
export const TELEMETRY_OFF: TelemetrySettings = {
  traces: false,
  metrics: false,
  serviceName: 'intake-sync',
  resourceAttributes: {},
  tracesEndpoint: 'http://localhost:4318/v1/traces',
  metricsEndpoint: 'http://localhost:4318/v1/metrics',
  protocol: 'http/protobuf',
  headers: {},
  timeoutMs: 10_000,
  sampler: 'parentbased_always_on',
  samplerRatio: 1,
  metricIntervalMs: 60_000,
};

/**
 * `k=v` pairs separated by commas, each part percent-decoded (the format of OTEL_RESOURCE_ATTRIBUTES
 * and OTEL_EXPORTER_OTLP_HEADERS); a problem names the pair's position, never its value. Pure.
 */
export function parseKeyValueList(text: string): { values: Record<string, string> } | { problem: string } {
  const values: Record<string, string> = {};
  const pairs = text.split(',').filter((pair) => pair.trim() !== '');
  if (pairs.length > 64) return { problem: 'must hold at most 64 key=value pairs' };
  for (const [index, pair] of pairs.entries()) {
    const at = pair.indexOf('=');
    if (at <= 0) return { problem: `pair ${index + 1} must be key=value` };
    try {
      const key = decodeURIComponent(pair.slice(0, at).trim());
      const value = decodeURIComponent(pair.slice(at + 1).trim());
      if (!/^[\x21-\x7e]{1,255}$/.test(key)) return { problem: `pair ${index + 1}: the key must be 1 to 255 printable ASCII characters` };
      if (value.length > 1024) return { problem: `pair ${index + 1}: the value must be at most 1024 characters` };
      values[key] = value;
    } catch {
      return { problem: `pair ${index + 1} is not valid percent-encoding` };
    }
  }
  return { values };
}

import { z } from 'zod';
import { OTLP_PROTOCOLS, parseKeyValueList, SAMPLERS, TELEMETRY_OFF, type TelemetrySettings } from '../telemetry/settings.js';

const httpUrl = z
  .string()
  .max(2048)
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol) && !new URL(value).search, {
    message: 'must be an http:// or https:// URL without a query',
  });

const keyValueList = (max: number) =>
  z
    .string()
    .max(max, { message: `must be at most ${max} characters` })
    .transform((text, ctx) => {
      const parsed = parseKeyValueList(text);
      if ('values' in parsed) return parsed.values;
      ctx.addIssue({ code: 'custom', message: parsed.problem });
      return z.NEVER;
    });

/**
 * The standard OpenTelemetry variables intake-sync reads (docs/operations.md, "Tracing"), validated
 * as every other variable. Unset, nothing is exported and the SDK is never loaded.
 */
export const telemetryEnvShape = {
  /** true: no span and no OTLP metric, whatever the other OTEL_* variables say */
  OTEL_SDK_DISABLED: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .default('false')
    .transform((v) => v === 'true'),
  /** otlp: export spans (implied by an OTLP endpoint); none: never */
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none'], { message: 'must be otlp or none' }).optional(),
  /** prometheus: /metrics only; otlp: the same series pushed over OTLP too (/metrics stays) */
  OTEL_METRICS_EXPORTER: z.enum(['prometheus', 'otlp'], { message: 'must be prometheus or otlp' }).default('prometheus'),
  /** the Collector's OTLP/HTTP base URL; /v1/traces and /v1/metrics are appended */
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
  /** the spans' own full URL (wins over OTEL_EXPORTER_OTLP_ENDPOINT) */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl.optional(),
  /** the metrics' own full URL */
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: httpUrl.optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(OTLP_PROTOCOLS, { message: `must be ${OTLP_PROTOCOLS.join(' or ')} (gRPC is not shipped: use the Collector's 4318)` })
    .default('http/protobuf'),
  /** key=value,... sent with every export (a hosted backend's API key): never echoed */
  OTEL_EXPORTER_OTLP_HEADERS: keyValueList(8192).optional(),
  OTEL_EXPORTER_OTLP_TIMEOUT: z.coerce
    .number({ message: 'must be a whole number from 100 to 120000' })
    .int({ message: 'must be a whole number from 100 to 120000' })
    .min(100, { message: 'must be a whole number from 100 to 120000' })
    .max(120_000, { message: 'must be a whole number from 100 to 120000' })
    .default(10_000),
  OTEL_SERVICE_NAME: z
    .string()
    .regex(/^[\x20-\x7e]{1,255}$/, { message: 'must be 1 to 255 printable ASCII characters' })
    .default('intake-sync'),
  /** key=value,... resource attributes (deployment.environment.name=prod,...) */
  OTEL_RESOURCE_ATTRIBUTES: keyValueList(4096).optional(),
  OTEL_TRACES_SAMPLER: z.enum(SAMPLERS, { message: `must be one of ${SAMPLERS.join(', ')}` }).default('parentbased_always_on'),
  /** the ratio of the traceidratio samplers, 0 to 1 */
  OTEL_TRACES_SAMPLER_ARG: z.coerce
    .number({ message: 'must be a number from 0 to 1' })
    .min(0, 'must be a number from 0 to 1')
    .max(1, 'must be a number from 0 to 1')
    .optional(),
  /** how often the OTLP metrics are pushed, ms */
  OTEL_METRIC_EXPORT_INTERVAL: z.coerce
    .number({ message: 'must be a whole number from 1000 to 3600000' })
    .int({ message: 'must be a whole number from 1000 to 3600000' })
    .min(1000, { message: 'must be a whole number from 1000 to 3600000' })
    .max(3_600_000, { message: 'must be a whole number from 1000 to 3600000' })
    .default(60_000),
};

const telemetryEnv = z.object(telemetryEnvShape);
export type TelemetryEnv = z.output<typeof telemetryEnv>;
export const telemetryEnvSchema = telemetryEnv;

/** What the parsed OTEL_* variables switch on. Pure. */
export function telemetrySettingsOf(env: TelemetryEnv): TelemetrySettings {
  if (env.OTEL_SDK_DISABLED) return TELEMETRY_OFF;
  const base = (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318').replace(/\/+$/, '');
  const traces =
    env.OTEL_TRACES_EXPORTER === 'otlp' ||
    (env.OTEL_TRACES_EXPORTER === undefined &&
      (env.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined));
  return {
    traces,
    metrics: env.OTEL_METRICS_EXPORTER === 'otlp',
    serviceName: env.OTEL_SERVICE_NAME,
    resourceAttributes: env.OTEL_RESOURCE_ATTRIBUTES ?? {},
    tracesEndpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${base}/v1/traces`,
    metricsEndpoint: env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT ?? `${base}/v1/metrics`,
    protocol: env.OTEL_EXPORTER_OTLP_PROTOCOL,
    headers: env.OTEL_EXPORTER_OTLP_HEADERS ?? {},
    timeoutMs: env.OTEL_EXPORTER_OTLP_TIMEOUT,
    sampler: env.OTEL_TRACES_SAMPLER,
    samplerRatio: env.OTEL_TRACES_SAMPLER_ARG ?? 1,
    metricIntervalMs: env.OTEL_METRIC_EXPORT_INTERVAL,
  };
}

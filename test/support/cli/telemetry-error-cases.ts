import type { ErrorCase } from './error-cases.js';

// The OTEL_* variables (src/config/telemetry-env.ts), each with a value it refuses: checked only when
// some OTEL_* variable is set, as here, and then as strictly as the rest of the configuration.

const SECRET = 'the value given is not shown: it may hold a secret';

const refused = (name: string, value: string, line: string): ErrorCase => ({
  label: name,
  args: ['status'],
  env: { [name]: value },
  lines: [`${name}: ${line}`],
  code: 2,
});

const URL_LINE = (value: string) => `must be an http:// or https:// URL without a query (given "${value}")`;

export const TELEMETRY_VARIABLE_CASES: readonly ErrorCase[] = [
  refused('OTEL_SDK_DISABLED', 'maybe', 'must be true or false (given "maybe")'),
  refused('OTEL_TRACES_EXPORTER', 'zipkin', 'must be otlp or none (given "zipkin")'),
  refused('OTEL_METRICS_EXPORTER', 'statsd', 'must be prometheus or otlp (given "statsd")'),
  refused('OTEL_EXPORTER_OTLP_ENDPOINT', 'not-a-url', URL_LINE('not-a-url')),
  refused('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'ftp://x', URL_LINE('ftp://x')),
  refused('OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', 'not-a-url', URL_LINE('not-a-url')),
  refused(
    'OTEL_EXPORTER_OTLP_PROTOCOL',
    'grpc',
    'must be http/protobuf or http/json (gRPC is not shipped: use the Collector\'s 4318) (given "grpc")',
  ),
  // headers carry credentials: the value is never echoed
  refused('OTEL_EXPORTER_OTLP_HEADERS', 'authorization', `pair 1 must be key=value (${SECRET})`),
  refused('OTEL_EXPORTER_OTLP_TIMEOUT', '-5', 'must be a whole number from 100 to 120000 (given "-5")'),
  refused('OTEL_SERVICE_NAME', 'tab\there', 'must be 1 to 255 printable ASCII characters (given "tab\\there")'),
  refused('OTEL_RESOURCE_ATTRIBUTES', 'novalue', 'pair 1 must be key=value (given "novalue")'),
  refused(
    'OTEL_TRACES_SAMPLER',
    'sometimes',
    'must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio (given "sometimes")',
  ),
  refused('OTEL_TRACES_SAMPLER_ARG', '2', 'must be a number from 0 to 1 (given "2")'),
  refused('OTEL_METRIC_EXPORT_INTERVAL', '0', 'must be a whole number from 1000 to 3600000 (given "0")'),
];

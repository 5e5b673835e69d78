import { describe, expect, it } from 'vitest';
import { ConfigError, loadTelemetryConfig } from '../../src/config/config.js';

describe('the OTEL_* variables', () => {
  it('unset: nothing exported (the SDK is not loaded)', () => {
    expect(loadTelemetryConfig({})).toMatchObject({ traces: false, metrics: false, serviceName: 'intake-sync' });
  });

  it('an endpoint switches traces on; the signal paths are appended; the rest as given', () => {
    const settings = loadTelemetryConfig({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      OTEL_SERVICE_NAME: 'intake-sync-east',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,team=rx%20ops',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc',
      OTEL_METRICS_EXPORTER: 'otlp',
    });
    expect(settings).toMatchObject({
      traces: true,
      metrics: true,
      tracesEndpoint: 'http://collector:4318/v1/traces',
      metricsEndpoint: 'http://collector:4318/v1/metrics',
      serviceName: 'intake-sync-east',
      resourceAttributes: { 'deployment.environment.name': 'prod', team: 'rx ops' },
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
      headers: { 'x-api-key': 'abc' },
    });
  });

  it('OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED=true win over an endpoint', () => {
    expect(loadTelemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }).traces).toBe(false);
    expect(loadTelemetryConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }).traces).toBe(false);
  });

  it.each([
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318', /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:\/\/ or https:\/\/ URL/],
    ['OTEL_EXPORTER_OTLP_PROTOCOL', 'grpc', /OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/protobuf or http\/json/],
    ['OTEL_TRACES_SAMPLER', 'sometimes', /OTEL_TRACES_SAMPLER: must be one of/],
    ['OTEL_TRACES_SAMPLER_ARG', '2', /OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1/],
    ['OTEL_RESOURCE_ATTRIBUTES', 'novalue', /OTEL_RESOURCE_ATTRIBUTES: pair 1 must be key=value/],
    ['OTEL_EXPORTER_OTLP_HEADERS', 'authorization', /OTEL_EXPORTER_OTLP_HEADERS: pair 1 must be key=value \(the value given is not shown/],
  ])('%s=%s is refused naming the variable', (variable, value, message) => {
    expect(() => loadTelemetryConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadTelemetryConfig({ [variable]: value })).toThrow(message);
  });
});

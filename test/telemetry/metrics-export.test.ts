import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSyncMetrics, type SyncMetrics } from '../../src/ops/metrics.js';
import { WorkerState } from '../../src/sync/state/worker-state.js';
import type { PrometheusMetric } from '../../src/telemetry/prometheus-bridge.js';
import { TELEMETRY_OFF } from '../../src/telemetry/settings.js';
import { startTelemetry, type Telemetry } from '../../src/telemetry/start.js';
import { startOtlpReceiver, type OtlpReceiver } from '../support/telemetry/otlp-receiver.js';

// Issue 38 §5: OTEL_METRICS_EXPORTER=otlp pushes the /metrics series over OTLP with the same names and
// labels, to a real receiver (protobuf, decoded); /metrics itself is untouched.

let receiver: OtlpReceiver;
let telemetry: Telemetry;
let metrics: SyncMetrics;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  telemetry = await startTelemetry({
    ...TELEMETRY_OFF,
    metrics: true,
    metricsEndpoint: `${receiver.endpoint}/v1/metrics`,
    // no export before the test's flush
    metricIntervalMs: 3_600_000,
  });
  const clock = { now: () => 1_700_000_000_000 };
  const state = new WorkerState(clock);
  metrics = createSyncMetrics(state, clock, { feed: 'east', pollIntervalMs: 5_000, readyMaxPollAgeMs: 60_000 });
});
afterAll(async () => {
  metrics.close();
  await telemetry.shutdown();
  await receiver.close();
});

describe('the /metrics series over OTLP', () => {
  it('every series of /metrics arrives with its name, labels and value; tracing stays off', async () => {
    expect(telemetry.tracing).toBe(false);
    telemetry.exportMetrics(async () => (await metrics.registry.getMetricsAsJSON()) as unknown as PrometheusMetric[]);
    await telemetry.flush();
    const points = receiver.points();
    const json = (await metrics.registry.getMetricsAsJSON()) as unknown as PrometheusMetric[];
    const kinds: Record<string, string> = { counter: 'sum', gauge: 'gauge', histogram: 'histogram' };
    for (const metric of json) {
      const kind = kinds[String(metric.type)];
      if (!kind || metric.values.length === 0) continue;
      const received = points.filter((p) => p.name === metric.name);
      expect(received.length, `${metric.name} exported`).toBeGreaterThan(0);
      expect(
        received.every((p) => p.kind === kind),
        `${metric.name} is a ${kind}`,
      ).toBe(true);
      // the process series (CPU, memory, handles: the export's own socket) move between two reads: present is enough
      if (kind === 'histogram' || !metric.name.startsWith('intake_sync_')) continue;
      // same labels, same values, series by series
      const expected = metric.values.map((v) => ({
        labels: Object.fromEntries(Object.entries(v.labels).map(([k, x]) => [k, String(x)])),
        value: v.value,
      }));
      expect(received.map((p) => ({ labels: p.attributes, value: p.value }))).toEqual(expect.arrayContaining(expected));
    }
    const feedSeries = points.filter((p) => p.name.startsWith('intake_sync_'));
    expect(feedSeries.length).toBeGreaterThan(10);
    expect(feedSeries.every((p) => p.attributes.feed === 'east' || !('feed' in p.attributes))).toBe(true);
    expect(receiver.spans()).toEqual([]);
  });
});

import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { DataPointType } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import { type PrometheusMetric, prometheusToOtlp } from '../../src/telemetry/prometheus-bridge.js';

describe('prometheusToOtlp', () => {
  it('counters are monotonic sums, gauges gauges, histograms per-bucket counts; names and labels kept', async () => {
    const registry = new Registry();
    new Counter({ name: 'x_events_total', help: 'c', labelNames: ['feed'], registers: [registry] }).inc({ feed: 'a' }, 3);
    new Gauge({ name: 'x_lag_seconds', help: 'g', labelNames: ['feed'], registers: [registry] }).set({ feed: 'a' }, 1.5);
    const h = new Histogram({ name: 'x_page_seconds', help: 'h', labelNames: ['feed'], buckets: [0.1, 1], registers: [registry] });
    for (const v of [0.05, 0.5, 0.5, 5]) h.observe({ feed: 'a' }, v);
    const json = (await registry.getMetricsAsJSON()) as unknown as PrometheusMetric[];
    const data = prometheusToOtlp(json, [1, 0], [2, 0]);
    expect(data.map((d) => [d.descriptor.name, d.dataPointType, d.descriptor.unit])).toEqual([
      ['x_events_total', DataPointType.SUM, '1'],
      ['x_lag_seconds', DataPointType.GAUGE, 's'],
      ['x_page_seconds', DataPointType.HISTOGRAM, 's'],
    ]);
    expect(data[0]?.dataPoints).toEqual([{ startTime: [1, 0], endTime: [2, 0], attributes: { feed: 'a' }, value: 3 }]);
    expect(data[2]?.dataPoints[0]?.value).toEqual({ buckets: { boundaries: [0.1, 1], counts: [1, 2, 1] }, sum: 6.05, count: 4 });
  });
});

import { type HrTime, ValueType } from '@opentelemetry/api';
import { AggregationTemporality, DataPointType, type MetricData } from '@opentelemetry/sdk-metrics';

/** One metric as prom-client's `Registry.getMetricsAsJSON()` gives it. */
export interface PrometheusMetric {
  name: string;
  help: string;
  /** prom-client's MetricType (its values are the type names) */
  type: unknown;
  values: Array<{ value: number; labels: Record<string, string | number>; metricName?: string }>;
}

type Labels = Record<string, string>;

/**
 * The /metrics series as OTLP metric data with the same names and labels: a counter is a monotonic
 * cumulative sum, a gauge a gauge, a histogram a cumulative histogram (prom-client's cumulative
 * `le` buckets turned into per-bucket counts). `startTime` is the process start, as for every
 * cumulative series of a process. A summary (none is registered) is skipped. Pure.
 */
export function prometheusToOtlp(metrics: readonly PrometheusMetric[], startTime: HrTime, now: HrTime): MetricData[] {
  const out: MetricData[] = [];
  for (const metric of metrics) {
    const descriptor = { name: metric.name, description: metric.help, unit: unitOf(metric.name), valueType: ValueType.DOUBLE };
    const point = (labels: Labels, value: number) => ({ startTime, endTime: now, attributes: labels, value });
    const type = String(metric.type);
    if (type === 'counter') {
      out.push({
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.SUM,
        isMonotonic: true,
        dataPoints: metric.values.map((v) => point(stringLabels(v.labels), v.value)),
      });
    } else if (type === 'gauge') {
      out.push({
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.GAUGE,
        dataPoints: metric.values.map((v) => point(stringLabels(v.labels), v.value)),
      });
    } else if (type === 'histogram') {
      out.push({
        descriptor,
        aggregationTemporality: AggregationTemporality.CUMULATIVE,
        dataPointType: DataPointType.HISTOGRAM,
        dataPoints: histogramPoints(metric).map(({ labels, value }) => ({ startTime, endTime: now, attributes: labels, value })),
      });
    }
  }
  return out;
}

interface HistogramSeries {
  labels: Labels;
  le: Array<{ bound: number; cumulative: number }>;
  sum: number;
  count: number;
}

function histogramPoints(metric: PrometheusMetric) {
  const series = new Map<string, HistogramSeries>();
  for (const v of metric.values) {
    const { le, ...rest } = v.labels;
    const labels = stringLabels(rest);
    const key = JSON.stringify(Object.entries(labels).sort());
    const entry = series.get(key) ?? { labels, le: [], sum: 0, count: 0 };
    series.set(key, entry);
    if (v.metricName?.endsWith('_bucket') && le !== undefined) {
      entry.le.push({ bound: le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le), cumulative: v.value });
    } else if (v.metricName?.endsWith('_sum')) entry.sum = v.value;
    else if (v.metricName?.endsWith('_count')) entry.count = v.value;
  }
  return [...series.values()].map(({ labels, le, sum, count }) => {
    const sorted = le.sort((a, b) => a.bound - b.bound);
    const boundaries = sorted.filter((b) => Number.isFinite(b.bound)).map((b) => b.bound);
    const counts = sorted.map((b, i) => b.cumulative - (i === 0 ? 0 : (sorted[i - 1]?.cumulative ?? 0)));
    return { labels, value: { buckets: { boundaries, counts }, sum, count } };
  });
}

function stringLabels(labels: Record<string, string | number>): Labels {
  return Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, String(v)]));
}

// the unit the name's suffix says (Prometheus naming): OTLP carries it beside the name, which stays as it is
function unitOf(name: string): string {
  if (name.endsWith('_seconds') || name.includes('_seconds_')) return 's';
  if (name.endsWith('_bytes') || name.includes('_bytes_')) return 'By';
  return '1';
}

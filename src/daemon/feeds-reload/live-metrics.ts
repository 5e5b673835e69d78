import { collectDefaultMetrics, Registry } from 'prom-client';
import { createFeedsMetrics, EVENT_LOOP_MONITORING_MS, type FeedMetricsSource, type SyncMetrics } from '../../ops/metrics.js';

type FeedsLimits = Parameters<typeof createFeedsMetrics>[2];

/**
 * The daemon's /metrics when its feeds change while it runs: the process series (and `extra`, the
 * reload series) on a registry made once, the per-feed series rebuilt for each new set of feeds.
 * The health server reads `registry` at each scrape. A rebuilt feed's counters start again at 0,
 * which Prometheus' rate() reads as a counter reset.
 */
export class LiveMetrics implements SyncMetrics {
  private readonly process = new Registry();
  private feeds: SyncMetrics;
  private merged: Registry;

  constructor(
    sources: readonly FeedMetricsSource[],
    private readonly clock: { now(): number },
    private readonly limits: FeedsLimits,
    extra: (registry: Registry) => void,
  ) {
    // made once: each call starts an event-loop monitor that nothing stops
    collectDefaultMetrics({ register: this.process, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_MS });
    extra(this.process);
    this.feeds = this.build(sources);
    this.merged = Registry.merge([this.process, this.feeds.registry]);
  }

  get registry(): Registry {
    return this.merged;
  }

  /** The per-feed series of a new set of feeds (after a reload); the old ones detach from their states. */
  rebuild(sources: readonly FeedMetricsSource[]): void {
    const old = this.feeds;
    this.feeds = this.build(sources);
    this.merged = Registry.merge([this.process, this.feeds.registry]);
    old.close();
  }

  close(): void {
    this.feeds.close();
  }

  private build(sources: readonly FeedMetricsSource[]): SyncMetrics {
    return createFeedsMetrics(sources, this.clock, { ...this.limits, processMetrics: false });
  }
}

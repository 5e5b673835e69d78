import { Counter, Gauge, type Registry } from 'prom-client';

/** What the daemon says about its FEEDS_FILE reloads (deploy/prometheus/alerts.yaml alerts on them). */
export interface ReloadMetrics {
  /** a file read and applied (or found unchanged on SIGHUP) */
  succeeded(nowMs: number): void;
  /** a file refused (or its change not applied): the running feeds keep running */
  failed(): void;
  register(registry: Registry): void;
}

/** The reload series, process-wide (no feed label), created at start with the start's read as the first success. */
export function createReloadMetrics(startedAtMs: number): ReloadMetrics {
  const failures = new Counter({
    name: 'intake_sync_feeds_reload_failures_total',
    help: 'FEEDS_FILE reloads refused (a bad file or secret file) or not applied; the running feeds kept running',
    registers: [],
  });
  const refused = new Gauge({
    name: 'intake_sync_feeds_reload_failed',
    help: '1 while the newest FEEDS_FILE this process read was refused: it runs an older configuration',
    registers: [],
  });
  const lastSuccess = new Gauge({
    name: 'intake_sync_feeds_reload_last_success_timestamp_seconds',
    help: 'When this process last read FEEDS_FILE and applied it (its start included)',
    registers: [],
  });
  failures.inc(0);
  refused.set(0);
  lastSuccess.set(startedAtMs / 1000);
  return {
    succeeded(nowMs) {
      refused.set(0);
      lastSuccess.set(nowMs / 1000);
    },
    failed() {
      failures.inc();
      refused.set(1);
    },
    register(registry) {
      for (const metric of [failures, refused, lastSuccess]) registry.registerMetric(metric);
    },
  };
}

import { Counter, Gauge, type Registry } from 'prom-client';
import { withDeadline } from '../db/deadline.js';
import { RETENTION_CLASSES } from '../sync/retention/retention-classes.js';
import type { WorkerState } from '../sync/state/worker-state.js';
import { SOURCE_DEADLINE_MS } from './metrics-provided-gauges.js';

const PROCESS_STARTED_S = Math.floor(performance.timeOrigin / 1000);

/** The unix time (s) of the feed's last completed retention pass, whichever replica ran it; 0 before the first. */
export type RetentionSource = () => Promise<number>;
/** The size in bytes of each table of the deployment's schema, indexes and TOAST included. */
export type TableSizeSource = () => Promise<Record<string, number>>;

export interface RetentionMetricsFeed {
  feed: string;
  state: WorkerState;
  retention?: RetentionSource | undefined;
}

export interface RetentionMetricsOptions {
  /** RETENTION_INTERVAL, exported so the "cleaner not running" alert follows the configuration */
  retentionIntervalMs?: number | undefined;
  tableSizes?: TableSizeSource | undefined;
}

/**
 * The retention cleaner's metrics: rows purged by class (counted by the process that purged them), the
 * last completed pass and each table's size (both read from the database at scrape time, so every
 * replica reports the leader's runs and the rules take the max). A read that misses its deadline keeps
 * the last value.
 */
export function registerRetentionMetrics(
  registers: Registry[],
  feeds: readonly RetentionMetricsFeed[],
  options: RetentionMetricsOptions,
): () => void {
  const purged = new Counter({
    name: 'intake_sync_retention_purged_total',
    help: 'Rows the retention cleaner removed (or stripped of their PHI), by class (RETAIN_* setting)',
    labelNames: ['feed', 'class'],
    registers,
  });
  const lastRun = new Gauge({
    name: 'intake_sync_retention_last_run_timestamp_seconds',
    help: "Unix time of the feed's last completed retention pass, by any replica or `intake-sync purge`; before the first, when this process started",
    labelNames: ['feed'],
    registers,
    async collect() {
      await Promise.all(
        feeds.map(async ({ feed, retention }) => {
          if (!retention) return;
          const at = await withDeadline(retention(), SOURCE_DEADLINE_MS, 'reading the retention gauge').catch(() => undefined);
          // no pass recorded yet (a fresh install): count from this process's start, so the alert waits
          // for the first pass to be overdue instead of firing on a new deployment
          if (at !== undefined) this.set({ feed }, at > 0 ? at : PROCESS_STARTED_S);
        }),
      );
    },
  });
  const interval = new Gauge({
    name: 'intake_sync_retention_interval_seconds',
    help: 'RETENTION_INTERVAL: how often the leader runs a retention pass',
    labelNames: ['feed'],
    registers,
  });
  const tableSizes = options.tableSizes;
  const sizes = new Gauge({
    name: 'intake_sync_table_size_bytes',
    help: "Size of each table of the deployment's schema on disk, indexes and TOAST included (pg_total_relation_size, at scrape time)",
    labelNames: ['table'],
    registers,
    async collect() {
      if (!tableSizes) return;
      const read = await withDeadline(tableSizes(), SOURCE_DEADLINE_MS, 'reading table sizes').catch(() => undefined);
      if (read) for (const [table, bytes] of Object.entries(read)) this.set({ table }, bytes);
    },
  });
  void sizes;
  const unsubscribes = feeds.map(({ feed, state }) => {
    for (const cls of RETENTION_CLASSES) purged.inc({ feed, class: cls }, 0);
    lastRun.set({ feed }, 0);
    if (options.retentionIntervalMs !== undefined) interval.set({ feed }, options.retentionIntervalMs / 1000);
    return state.subscribe({
      retentionPurged(cls, rows) {
        purged.inc({ feed, class: cls }, rows);
      },
    });
  });
  return () => {
    for (const unsubscribe of unsubscribes) unsubscribe();
  };
}

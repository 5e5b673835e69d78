import { Counter, Histogram, type Registry } from 'prom-client';
import type { WorkerState } from '../sync/state/worker-state.js';

/**
 * The statistics task's metrics (src/sync/statistics/): ANALYZE runs and their duration by table,
 * counted by the process whose leader ran them. Tables are the schema's, never a label with PHI.
 */
export function registerStatisticsMetrics(registers: Registry[], feeds: readonly { state: WorkerState }[]): () => void {
  const runs = new Counter({
    name: 'intake_sync_statistics_analyzed_total',
    help: 'ANALYZE runs of the statistics task, by table (its rows changed since the last ANALYZE passed the autovacuum threshold)',
    labelNames: ['table'],
    registers,
  });
  const rows = new Counter({
    name: 'intake_sync_statistics_rows_changed_total',
    help: 'Rows changed since their previous ANALYZE in the tables the statistics task analyzed, by table',
    labelNames: ['table'],
    registers,
  });
  const duration = new Histogram({
    name: 'intake_sync_statistics_analyze_duration_seconds',
    help: 'Time of one ANALYZE by the statistics task',
    labelNames: ['table'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const unsubscribes = feeds.map(({ state }) =>
    state.subscribe({
      tableAnalyzed(table, changed, durationMs) {
        runs.inc({ table });
        rows.inc({ table }, changed);
        duration.observe({ table }, durationMs / 1000);
      },
    }),
  );
  return () => {
    for (const unsubscribe of unsubscribes) unsubscribe();
  };
}

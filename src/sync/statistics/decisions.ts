/**
 * The statistics task's decisions, pure: which tables are due for ANALYZE and when the next pass runs.
 * The rule is autovacuum's own (the PostgreSQL docs, "The Autovacuum Daemon"): a table is analyzed
 * when the rows changed since its last ANALYZE exceed
 * autovacuum_analyze_threshold + autovacuum_analyze_scale_factor * reltuples.
 */

/** The server's autovacuum_analyze_threshold and autovacuum_analyze_scale_factor. */
export interface AnalyzeThreshold {
  base: number;
  scaleFactor: number;
}

/** One table of the schema as pg_stat_all_tables and pg_class see it. */
export interface TableActivity {
  table: string;
  /** n_mod_since_analyze */
  rowsChanged: number;
  /** pg_class.reltuples: -1 (PostgreSQL 14+) when never vacuumed nor analyzed */
  reltuples: number;
}

/** The rows changed above which `reltuples` rows are analyzed again. */
export function analyzeLimit(threshold: AnalyzeThreshold, reltuples: number): number {
  // a table never analyzed (reltuples -1) counts as empty: its first rows past the base make it due
  return threshold.base + threshold.scaleFactor * Math.max(0, reltuples);
}

/** The tables due for ANALYZE, most rows changed first (a pass cut short analyzed the worst ones). */
export function tablesDue(tables: readonly TableActivity[], threshold: AnalyzeThreshold): TableActivity[] {
  return tables
    .filter((t) => t.rowsChanged > analyzeLimit(threshold, t.reltuples))
    .sort((a, b) => b.rowsChanged - a.rowsChanged || a.table.localeCompare(b.table));
}

/** The wait before the next pass: the start delay first, a short retry after a failure, else the interval. */
export function nextStatisticsDelay(
  run: { passes: number; failures: number },
  intervalMs: number,
  startDelayMs: number,
  retryMs: number,
): number {
  if (run.failures > 0) return Math.min(intervalMs, retryMs * 2 ** Math.min(run.failures - 1, 6));
  return run.passes === 0 ? Math.min(startDelayMs, intervalMs) : intervalMs;
}

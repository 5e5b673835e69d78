import type { CeilingResult } from './ceiling.js';
import type { DrainResult } from './drain.js';
import type { LatencyResult } from './latency.js';
import type { MachineInfo } from './machine.js';
import type { MatchScalingResult } from './match-scaling.js';
import type { NaiveResult } from './naive.js';
import { TIMING_PARTS } from './page-timings.js';
import { round } from './stats.js';

/** Everything one bench run measured. */
export interface BenchResults {
  started_at: string;
  command: string;
  machine: MachineInfo;
  drain: DrainResult;
  ceiling: CeilingResult;
  naive: NaiveResult;
  match: MatchScalingResult;
  latency: LatencyResult;
}

/** The targets of issue 4, as pass/fail facts. */
export interface TargetChecks {
  drain_vs_ceiling: boolean;
  drain_vs_naive: boolean;
  peak_rss: boolean;
  match_scaling: boolean;
  latency_p99: boolean;
}

/** The one-line JSON summary (the bench's last stdout line). */
export function summaryLine(r: BenchResults): Record<string, number | boolean | Record<string, number | boolean>> {
  const perPage = Object.fromEntries(TIMING_PARTS.map((part) => [`${part}_ms_per_page`, round(r.drain.per_page_ms[part].mean, 2)]));
  return {
    events: r.drain.events,
    events_per_s: round(r.drain.events_per_s),
    pages_per_s: round(r.drain.pages_per_s, 2),
    ceiling_events_per_s: round(r.ceiling.events_per_s),
    naive_events_per_s: round(r.naive.events_per_s),
    ratio_to_ceiling: round(r.drain.events_per_s / r.ceiling.events_per_s, 3),
    ratio_to_naive: round(r.drain.events_per_s / r.naive.events_per_s, 1),
    peak_rss_mb: round(r.drain.peak_rss_mb),
    match_ms_per_page_10k: round(r.match.match_ms_per_page_10k.p50, 2),
    match_ms_per_page_1m: round(r.match.match_ms_per_page_1m.p50, 2),
    poll_interval_ms: r.latency.poll_interval_ms,
    latency_p50_ms: round(r.latency.latency_ms.p50),
    latency_p99_ms: round(r.latency.latency_ms.p99),
    ...perPage,
    targets_met: { ...checkTargets(r) },
  };
}

/** Issue 4's targets against this run's own ceiling and baseline. */
export function checkTargets(r: BenchResults): TargetChecks {
  return {
    drain_vs_ceiling: r.drain.events_per_s >= 0.6 * r.ceiling.events_per_s,
    drain_vs_naive: r.drain.events_per_s >= 20 * r.naive.events_per_s,
    // the 200 MB budget is for a 1M-event drain; smaller drains must stay under it too
    peak_rss: r.drain.peak_rss_mb <= 200,
    match_scaling: r.match.match_ms_per_page_1m.p50 <= 1.5 * r.match.match_ms_per_page_10k.p50,
    latency_p99: r.latency.latency_ms.p99 <= r.latency.poll_interval_ms + 250,
  };
}

function table(rows: ReadonlyArray<readonly [string, string, string]>): string {
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((row) => row[c]?.length ?? 0)));
  return rows.map((row) => row.map((cell, c) => (c === 1 ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0))).join('  ').trimEnd()).join('\n');
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mark = (ok: boolean) => (ok ? 'ok' : 'MISSED');

/** The human-readable report printed before the JSON line. */
export function formatReport(r: BenchResults): string {
  const t = checkTargets(r);
  const m = r.machine;
  const headline = table([
    ['measure', 'value', 'target'],
    ['drain events/s', fmt(r.drain.events_per_s), `>= 0.6 x ceiling, >= 20 x naive`],
    ['drain pages/s', fmt(r.drain.pages_per_s, 1), ''],
    ['ceiling events/s (Postgres alone)', fmt(r.ceiling.events_per_s), ''],
    ['naive events/s (1 txn/event)', fmt(r.naive.events_per_s), ''],
    ['drain / ceiling', fmt(r.drain.events_per_s / r.ceiling.events_per_s, 2), `>= 0.60  ${mark(t.drain_vs_ceiling)}`],
    ['drain / naive', fmt(r.drain.events_per_s / r.naive.events_per_s, 1), `>= 20  ${mark(t.drain_vs_naive)}`],
    ['worker peak RSS MB', fmt(r.drain.peak_rss_mb, 1), `<= 200  ${mark(t.peak_rss)}`],
    ['page statement ms (match + writes), 10k local (p50)', fmt(r.match.match_ms_per_page_10k.p50, 2), ''],
    ['page statement ms (match + writes), 1M local (p50)', fmt(r.match.match_ms_per_page_1m.p50, 2), `<= 1.5 x 10k  ${mark(t.match_scaling)}`],
    [`latency p50 ms (poll ${r.latency.poll_interval_ms} ms)`, fmt(r.latency.latency_ms.p50), ''],
    [`latency p99 ms (poll ${r.latency.poll_interval_ms} ms)`, fmt(r.latency.latency_ms.p99), `<= ${r.latency.poll_interval_ms + 250}  ${mark(t.latency_p99)}`],
  ]);
  const split = table([
    ['per page (ms)', 'mean', 'p50 / p99'],
    ...TIMING_PARTS.map((part) => {
      const s = r.drain.per_page_ms[part];
      return [part, fmt(s.mean, 2), `${fmt(s.p50, 2)} / ${fmt(s.p99, 2)}`] as const;
    }),
  ]);
  return [
    `intake-sync bench: ${fmt(r.drain.events)} events, ${fmt(r.drain.pages)} pages in ${fmt(r.drain.seconds, 1)} s`,
    `${m.cpu_model}, ${m.cores} cores, ${fmt(m.memory_mb)} MB; PostgreSQL ${m.pg_version}, synchronous_commit=${m.synchronous_commit}; load ${fmt(m.load_average_1m_at_start, 2)} at start`,
    '',
    headline,
    '',
    split,
  ].join('\n');
}

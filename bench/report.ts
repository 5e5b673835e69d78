import type { CeilingResult } from './ceiling.js';
import type { DrainResult } from './drain.js';
import type { IdleResult } from './idle.js';
import type { LatencyResult } from './latency.js';
import type { ManyFeedsResult } from './many-feeds.js';
import type { MachineInfo } from './machine.js';
import type { MatchScalingResult } from './match-scaling.js';
import type { NaiveResult } from './naive.js';
import { TIMING_PARTS } from './page-timings.js';
import { round } from './stats.js';
import type { WanResult } from './wan.js';

/** Everything one bench run measured. */
export interface BenchResults {
  started_at: string;
  command: string;
  machine: MachineInfo;
  /** the backlog drains of this run, in the order they ran */
  drains: DrainResult[];
  /** the same backlog split over several feeds, drained at once by one process */
  many_feeds: ManyFeedsResult;
  ceiling: CeilingResult;
  naive: NaiveResult;
  /** one drain per added round trip */
  wan: WanResult[];
  /** the daemon started with its V8 flags (DAEMON_NODE_FLAGS: npm start, the image, the unit) */
  idle: IdleResult;
  /** the daemon started plain (`node main.js run`: npx, a global install), which relaunches itself with them */
  idle_plain: IdleResult;
  match: MatchScalingResult;
  latency: LatencyResult;
}

/** Issue 12's targets (with issue 4's kept ones), as pass/fail facts. */
export interface TargetChecks {
  /** every drain of the run at >= 0.8 of the ceiling */
  drain_vs_ceiling: boolean;
  /** every WAN drain at >= 0.9 of its fetch-bound limit, on at most 2 connections */
  wan_vs_limit: boolean;
  wan_connections: boolean;
  idle_cpu: boolean;
  idle_rss: boolean;
  idle_db_statements: boolean;
  peak_rss: boolean;
  match_scaling: boolean;
  latency_p99: boolean;
  /** the many-feeds drain at >= 0.8 of the median single-feed drain of the same run */
  many_feeds_vs_single: boolean;
  many_feeds_rss: boolean;
}

export const TARGETS = {
  drainVsCeiling: 0.8,
  wanVsLimit: 0.9,
  wanConnections: 2,
  idleCpuPct: 0.5,
  idleRssMb: 100,
  /** "flat": the idle window's RSS may not grow by more than this */
  idleRssGrowthMb: 2,
  idleStatementsPerPoll: 2,
  peakRssMb: 200,
  manyFeedsVsSingle: 0.8,
  manyFeedsPeakRssMb: 300,
} as const;

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

/** The drain whose throughput is the median of the run (the lower middle one of an even count): its split is reported. */
export function medianDrain(r: BenchResults): DrainResult {
  const sorted = [...r.drains].sort((a, b) => a.events_per_s - b.events_per_s);
  return sorted[Math.floor((sorted.length - 1) / 2)] as DrainResult;
}

const ratios = (r: BenchResults) => r.drains.map((d) => d.events_per_s / r.ceiling.events_per_s);
/** the many-feeds drain against the single-feed drain of the same run (the median one) */
const manyFeedsRatio = (r: BenchResults) => r.many_feeds.events_per_s / medianDrain(r).events_per_s;
const idleRssGrowth = (idle: IdleResult) => idle.rss_mb_end - idle.rss_mb_start;

/** The one-line JSON summary (the bench's last stdout line). */
export function summaryLine(r: BenchResults): Record<string, number | boolean | number[] | Record<string, number | boolean>> {
  const drain = medianDrain(r);
  const perPage = Object.fromEntries(TIMING_PARTS.map((part) => [`${part}_ms_per_page`, round(drain.per_page_ms[part].mean, 2)]));
  const wan = Object.fromEntries(
    r.wan.flatMap((w) => [
      [`wan_${w.rtt_ms}ms_events_per_s`, round(w.events_per_s)],
      [`wan_${w.rtt_ms}ms_limit_events_per_s`, round(w.limit_events_per_s)],
      [`wan_${w.rtt_ms}ms_ratio_to_limit`, round(w.ratio_to_limit, 3)],
      [`wan_${w.rtt_ms}ms_operator_ms`, round(w.operator_ms.mean, 2)],
      [`wan_${w.rtt_ms}ms_connections`, w.connections],
    ]),
  );
  return {
    events: drain.events,
    events_per_s: round(drain.events_per_s),
    drains_events_per_s: r.drains.map((d) => round(d.events_per_s)),
    pages_per_s: round(drain.pages_per_s, 2),
    ceiling_events_per_s: round(r.ceiling.events_per_s),
    naive_events_per_s: round(r.naive.events_per_s),
    ratio_to_ceiling: round(drain.events_per_s / r.ceiling.events_per_s, 3),
    ratio_to_ceiling_min: round(Math.min(...ratios(r)), 3),
    ratio_to_ceiling_median: round(median(ratios(r)), 3),
    ratio_to_naive: round(drain.events_per_s / r.naive.events_per_s, 1),
    peak_rss_mb: round(Math.max(...r.drains.map((d) => d.peak_rss_mb))),
    many_feeds_count: r.many_feeds.feeds,
    many_feeds_events: r.many_feeds.events,
    many_feeds_events_per_s: round(r.many_feeds.events_per_s),
    many_feeds_ratio_to_single: round(manyFeedsRatio(r), 3),
    many_feeds_peak_rss_mb: round(r.many_feeds.peak_rss_mb),
    many_feeds_db_connections: r.many_feeds.peak_db_connections,
    ...wan,
    idle_polls: r.idle.polls,
    idle_poll_interval_ms: r.idle.poll_interval_ms,
    idle_cpu_pct_per_5s_poll: round(r.idle.cpu_pct_per_5s_poll, 3),
    idle_cpu_pct: round(r.idle.cpu_pct, 3),
    idle_rss_mb: round(r.idle.rss_mb_max),
    idle_rss_growth_mb: round(idleRssGrowth(r.idle), 2),
    idle_plain_rss_mb: round(r.idle_plain.rss_mb_max),
    idle_db_statements_per_poll: round(r.idle.db_statements_per_poll, 2),
    match_ms_per_page_10k: round(r.match.match_ms_per_page_10k.p50, 2),
    match_ms_per_page_1m: round(r.match.match_ms_per_page_1m.p50, 2),
    poll_interval_ms: r.latency.poll_interval_ms,
    latency_p50_ms: round(r.latency.latency_ms.p50),
    latency_p99_ms: round(r.latency.latency_ms.p99),
    ...perPage,
    targets_met: { ...checkTargets(r) },
  };
}

/** The targets against this run's own ceiling and limits. drain / naive is reported, no longer a target. */
export function checkTargets(r: BenchResults): TargetChecks {
  return {
    drain_vs_ceiling: Math.min(...ratios(r)) >= TARGETS.drainVsCeiling,
    wan_vs_limit: r.wan.every((w) => w.ratio_to_limit >= TARGETS.wanVsLimit),
    wan_connections: r.wan.every((w) => w.connections <= TARGETS.wanConnections),
    idle_cpu: r.idle.cpu_pct_per_5s_poll <= TARGETS.idleCpuPct,
    idle_rss: [r.idle, r.idle_plain].every(
      (idle) => idle.rss_mb_max <= TARGETS.idleRssMb && idleRssGrowth(idle) <= TARGETS.idleRssGrowthMb,
    ),
    idle_db_statements: r.idle.db_statements_per_poll <= TARGETS.idleStatementsPerPoll,
    // the 200 MB budget is for a 1M-event drain; smaller drains must stay under it too
    peak_rss: r.drains.every((d) => d.peak_rss_mb <= TARGETS.peakRssMb),
    match_scaling: r.match.match_ms_per_page_1m.p50 <= 1.5 * r.match.match_ms_per_page_10k.p50,
    latency_p99: r.latency.latency_ms.p99 <= r.latency.poll_interval_ms + 250,
    many_feeds_vs_single: manyFeedsRatio(r) >= TARGETS.manyFeedsVsSingle,
    many_feeds_rss: r.many_feeds.peak_rss_mb <= TARGETS.manyFeedsPeakRssMb,
  };
}

function table(rows: ReadonlyArray<readonly [string, string, string]>): string {
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((row) => row[c]?.length ?? 0)));
  return rows
    .map((row) =>
      row
        .map((cell, c) => (c === 1 ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const mark = (ok: boolean) => (ok ? 'ok' : 'MISSED');

/** The human-readable report printed before the JSON line. */
export function formatReport(r: BenchResults): string {
  const t = checkTargets(r);
  const m = r.machine;
  const drain = medianDrain(r);
  const rs = ratios(r);
  const headline = table([
    ['measure', 'value', 'target'],
    [`drain events/s (median of ${r.drains.length})`, fmt(drain.events_per_s), ''],
    ['drain events/s, each run', r.drains.map((d) => fmt(d.events_per_s)).join(' / '), ''],
    ['ceiling events/s (Postgres alone)', fmt(r.ceiling.events_per_s), ''],
    ['drain / ceiling, min', fmt(Math.min(...rs), 2), `>= ${TARGETS.drainVsCeiling.toFixed(2)}  ${mark(t.drain_vs_ceiling)}`],
    ['drain / ceiling, median', fmt(median(rs), 2), ''],
    [`${r.many_feeds.feeds} feeds in one process: events/s`, fmt(r.many_feeds.events_per_s), ''],
    [
      `${r.many_feeds.feeds} feeds / single-feed drain (median)`,
      fmt(manyFeedsRatio(r), 2),
      `>= ${TARGETS.manyFeedsVsSingle}  ${mark(t.many_feeds_vs_single)}`,
    ],
    [
      `${r.many_feeds.feeds} feeds: peak RSS MB; database connections`,
      `${fmt(r.many_feeds.peak_rss_mb, 1)}; ${r.many_feeds.peak_db_connections}`,
      `<= ${TARGETS.manyFeedsPeakRssMb}  ${mark(t.many_feeds_rss)}`,
    ],
    ['naive events/s (1 txn/event)', fmt(r.naive.events_per_s), ''],
    ['drain / naive (reported, not a target)', fmt(drain.events_per_s / r.naive.events_per_s, 1), ''],
    ...r.wan.flatMap((w) => [
      [
        `WAN ${w.rtt_ms} ms events/s (limit ${fmt(w.limit_events_per_s)})`,
        fmt(w.events_per_s),
        `>= ${TARGETS.wanVsLimit} x limit  ${mark(w.ratio_to_limit >= TARGETS.wanVsLimit)}`,
      ] as const,
      [
        `WAN ${w.rtt_ms} ms: drain / limit, operator ms per request`,
        `${fmt(w.ratio_to_limit, 3)}, ${fmt(w.operator_ms.mean, 2)}`,
        '',
      ] as const,
      [
        `WAN ${w.rtt_ms} ms: connections to the operator`,
        fmt(w.connections),
        `<= ${TARGETS.wanConnections}  ${mark(w.connections <= TARGETS.wanConnections)}`,
      ] as const,
    ]),
    [
      `idle CPU % of a core per 5 s poll (${r.idle.polls} polls every ${r.idle.poll_interval_ms} ms)`,
      fmt(r.idle.cpu_pct_per_5s_poll, 3),
      `<= ${TARGETS.idleCpuPct}  ${mark(t.idle_cpu)}`,
    ],
    [`idle CPU % of a core at that poll interval`, fmt(r.idle.cpu_pct, 3), ''],
    [
      'idle RSS MB (max; growth over the window), flagged / plain start',
      `${fmt(r.idle.rss_mb_max, 1)}; ${fmt(idleRssGrowth(r.idle), 2)} / ${fmt(r.idle_plain.rss_mb_max, 1)}; ${fmt(idleRssGrowth(r.idle_plain), 2)}`,
      `<= ${TARGETS.idleRssMb}, flat  ${mark(t.idle_rss)}`,
    ],
    [
      'idle database statements per poll',
      fmt(r.idle.db_statements_per_poll, 2),
      `<= ${TARGETS.idleStatementsPerPoll}  ${mark(t.idle_db_statements)}`,
    ],
    [
      'worker peak RSS MB (max of the drains)',
      fmt(Math.max(...r.drains.map((d) => d.peak_rss_mb)), 1),
      `<= ${TARGETS.peakRssMb}  ${mark(t.peak_rss)}`,
    ],
    ['page statement ms (match + writes), 10k local (p50)', fmt(r.match.match_ms_per_page_10k.p50, 2), ''],
    [
      'page statement ms (match + writes), 1M local (p50)',
      fmt(r.match.match_ms_per_page_1m.p50, 2),
      `<= 1.5 x 10k  ${mark(t.match_scaling)}`,
    ],
    [`latency p50 ms (poll ${r.latency.poll_interval_ms} ms)`, fmt(r.latency.latency_ms.p50), ''],
    [
      `latency p99 ms (poll ${r.latency.poll_interval_ms} ms)`,
      fmt(r.latency.latency_ms.p99),
      `<= ${r.latency.poll_interval_ms + 250}  ${mark(t.latency_p99)}`,
    ],
  ]);
  const split = table([
    ['per page, median drain (ms)', 'mean', 'p50 / p99'],
    ...TIMING_PARTS.map((part) => {
      const s = drain.per_page_ms[part];
      return [part, fmt(s.mean, 2), `${fmt(s.p50, 2)} / ${fmt(s.p99, 2)}`] as const;
    }),
  ]);
  return [
    `intake-sync bench: ${fmt(drain.events)} events, ${fmt(drain.pages)} pages in ${fmt(drain.seconds, 1)} s (median of ${r.drains.length} drains)`,
    `${m.cpu_model}, ${m.cores} cores, ${fmt(m.memory_mb)} MB; PostgreSQL ${m.pg_version}, synchronous_commit=${m.synchronous_commit}; load ${fmt(m.load_average_1m_at_start, 2)} at start`,
    '',
    headline,
    '',
    split,
  ].join('\n');
}

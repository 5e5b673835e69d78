import { describe, expect, test } from 'vitest';
import { checkTargets, formatReport, summaryLine, type BenchResults } from '../../bench/report.js';
import { summarize } from '../../bench/stats.js';

const flat = (ms: number) => summarize([ms]);

interface Overrides {
  drains?: number[];
  ceiling?: number;
  naive?: number;
  rss?: number;
  match10k?: number;
  match1m?: number;
  p99?: number;
  wanRatio?: number;
  wanConnections?: number;
  idleCpu?: number;
  idleRss?: [number, number, number];
  idlePlainRss?: [number, number, number];
  idleStatements?: number;
  manyFeeds?: number;
  manyFeedsRss?: number;
}

function drain(rate: number, rss: number) {
  return {
    events: 200_000,
    pages: 800,
    seconds: 200_000 / rate,
    events_per_s: rate,
    pages_per_s: rate / 250,
    peak_rss_mb: rss,
    rss_series_mb: [[100, 80]] as Array<[number, number]>,
    per_page_ms: {
      fetch: flat(4),
      fetch_wait: flat(0.5),
      prepare: flat(1.5),
      validate: flat(1),
      write: flat(5.5),
      commit: flat(1),
      apply: flat(7),
    },
  };
}

function wan(rttMs: number, ratio: number, connections: number) {
  const limit = (250 * 1000) / (rttMs + 3);
  return {
    rtt_ms: rttMs,
    events: 70_000,
    pages: 280,
    seconds: 70_000 / (limit * ratio),
    events_per_s: limit * ratio,
    requests: 280,
    requests_per_connection: [280],
    operator_ms: flat(3),
    wire_ms: flat(rttMs + 3.5),
    turnaround_ms: flat(1.5),
    limit_events_per_s: limit,
    ratio_to_limit: ratio,
    connections,
    peak_rss_mb: 90,
    per_page_ms: drain(1, 90).per_page_ms,
  };
}

function idle(rssStart: number, rssEnd: number, rssMax: number, overrides: Overrides): BenchResults['idle'] {
  return {
    poll_interval_ms: 1_000,
    polls: 120,
    seconds: 120,
    cpu_seconds: 0.24,
    cpu_pct: 0.2,
    cpu_pct_per_5s_poll: overrides.idleCpu ?? 0.04,
    rss_mb_start: rssStart,
    rss_mb_end: rssEnd,
    rss_mb_max: rssMax,
    db_statements_per_poll: overrides.idleStatements ?? 1.5,
    db_simple_queries: 60,
    db_executes: 120,
  };
}

function results(overrides: Overrides = {}): BenchResults {
  const [rssStart, rssEnd, rssMax] = overrides.idleRss ?? [60, 60.5, 61];
  return {
    started_at: '2026-11-21T10:00:00.000Z',
    command: 'npm run bench -- --events 200000',
    machine: {
      cpu_model: 'Test CPU',
      cores: 2,
      memory_mb: 4096,
      load_average_1m_at_start: 0.5,
      node_version: 'v20.20.0',
      pg_version: '15.20',
      synchronous_commit: 'on',
      shared_buffers: '128MB',
      wal_sync_method: 'fdatasync',
    },
    drains: (overrides.drains ?? [34_000, 32_000, 36_000]).map((rate) => drain(rate, overrides.rss ?? 120)),
    many_feeds: {
      feeds: 20,
      events: 200_000,
      pages: 800,
      seconds: 200_000 / (overrides.manyFeeds ?? 30_600),
      events_per_s: overrides.manyFeeds ?? 30_600,
      per_feed_events_per_s: flat(1_530),
      process_seconds: 8,
      peak_rss_mb: overrides.manyFeedsRss ?? 210,
      rss_series_mb: [[100, 150]],
      peak_db_connections: 6,
    },
    ceiling: { pages: 1_600, events: 400_000, seconds: 10, events_per_s: overrides.ceiling ?? 40_000, pages_per_s: 160 },
    naive: { events: 5_000, seconds: 10, events_per_s: overrides.naive ?? 500 },
    wan: [wan(50, overrides.wanRatio ?? 0.95, overrides.wanConnections ?? 1), wan(150, 0.97, 1)],
    idle: idle(rssStart, rssEnd, rssMax, overrides),
    idle_plain: idle(...(overrides.idlePlainRss ?? [62, 62.5, 63]), overrides),
    match: {
      probe_events: 10_000,
      match_ms_per_page_10k: flat(overrides.match10k ?? 2),
      match_ms_per_page_1m: flat(overrides.match1m ?? 2.4),
    },
    latency: {
      poll_interval_ms: 1_000,
      rounds: 30,
      events: 150,
      latency_ms: { count: 150, mean: 600, p50: 550, p99: overrides.p99 ?? 1_100, max: 1_150 },
    },
  };
}

describe('checkTargets', () => {
  test.each([
    ['all met', {}, {}],
    ['one drain under 0.8 x ceiling', { drains: [34_000, 31_999, 36_000] }, { drain_vs_ceiling: false }],
    ['the slowest drain exactly 0.8 x ceiling', { drains: [32_000, 34_000, 36_000] }, {}],
    ['drain under 20 x naive is no longer a target', { naive: 1_600 }, {}],
    ['a WAN drain under 0.9 x its limit', { wanRatio: 0.89 }, { wan_vs_limit: false }],
    ['a WAN drain on 3 connections', { wanConnections: 3 }, { wan_connections: false }],
    ['idle CPU over 0.5 % per 5 s poll', { idleCpu: 0.51 }, { idle_cpu: false }],
    ['idle RSS over 100 MB', { idleRss: [99, 100, 100.1] as [number, number, number] }, { idle_rss: false }],
    ['the plain start idling over 100 MB', { idlePlainRss: [99, 100, 100.1] as [number, number, number] }, { idle_rss: false }],
    ['idle RSS growing over the window', { idleRss: [60, 62.5, 62.5] as [number, number, number] }, { idle_rss: false }],
    ['over 2 statements per empty poll', { idleStatements: 2.01 }, { idle_db_statements: false }],
    ['RSS over 200 MB', { rss: 200.1 }, { peak_rss: false }],
    ['match 1M over 1.5 x 10k', { match1m: 3.01 }, { match_scaling: false }],
    ['latency p99 over poll + 250 ms', { p99: 1_251 }, { latency_p99: false }],
    ['many feeds exactly 0.8 x the median single drain', { manyFeeds: 27_200 }, {}],
    ['many feeds under 0.8 x the median single drain', { manyFeeds: 27_199 }, { many_feeds_vs_single: false }],
    ['many feeds over 300 MB', { manyFeedsRss: 300.1 }, { many_feeds_rss: false }],
  ])('%s', (_, input, failed) => {
    const allMet = {
      drain_vs_ceiling: true,
      wan_vs_limit: true,
      wan_connections: true,
      idle_cpu: true,
      idle_rss: true,
      idle_db_statements: true,
      peak_rss: true,
      match_scaling: true,
      latency_p99: true,
      many_feeds_vs_single: true,
      many_feeds_rss: true,
    };
    expect(checkTargets(results(input))).toEqual({ ...allMet, ...failed });
  });
});

describe('summaryLine', () => {
  test('carries the required fields, rounded, and the ratios', () => {
    const line = summaryLine(results());
    expect(line).toMatchObject({
      events: 200_000,
      // the median of the three drains
      events_per_s: 34_000,
      drains_events_per_s: [34_000, 32_000, 36_000],
      pages_per_s: 136,
      ceiling_events_per_s: 40_000,
      naive_events_per_s: 500,
      ratio_to_ceiling: 0.85,
      ratio_to_ceiling_min: 0.8,
      ratio_to_ceiling_median: 0.85,
      ratio_to_naive: 68,
      peak_rss_mb: 120,
      many_feeds_count: 20,
      many_feeds_events: 200_000,
      many_feeds_events_per_s: 30_600,
      many_feeds_ratio_to_single: 0.9,
      many_feeds_peak_rss_mb: 210,
      many_feeds_db_connections: 6,
      wan_50ms_events_per_s: 4_481.1,
      wan_50ms_limit_events_per_s: 4_717,
      wan_50ms_connections: 1,
      wan_150ms_limit_events_per_s: 1_634,
      idle_cpu_pct_per_5s_poll: 0.04,
      idle_rss_mb: 61,
      idle_rss_growth_mb: 0.5,
      idle_plain_rss_mb: 63,
      idle_db_statements_per_poll: 1.5,
      match_ms_per_page_10k: 2,
      match_ms_per_page_1m: 2.4,
      poll_interval_ms: 1_000,
      latency_p50_ms: 550,
      latency_p99_ms: 1_100,
      fetch_ms_per_page: 4,
      validate_ms_per_page: 1,
      write_ms_per_page: 5.5,
      commit_ms_per_page: 1,
    });
  });

  test('is one line of JSON', () => {
    expect(JSON.stringify(summaryLine(results()))).not.toContain('\n');
  });
});

describe('formatReport', () => {
  test('aligned table with the machine, the measures and the target verdicts', () => {
    const text = formatReport(results({ drains: [20_000, 34_000, 36_000] }));
    expect(text).toContain('Test CPU, 2 cores, 4,096 MB; PostgreSQL 15.20, synchronous_commit=on');
    expect(text).toMatch(/drain \/ ceiling, min\s+0\.50\s+>= 0\.80  MISSED/);
    expect(text).toMatch(/drain \/ ceiling, median\s+0\.85\s*$/m);
    expect(text).toMatch(/drain \/ naive \(reported, not a target\)\s+68\.0\s*$/m);
    expect(text).toMatch(/WAN 50 ms events\/s \(limit 4,717\)\s+4,481\s+>= 0\.9 x limit  ok/);
    expect(text).toMatch(/20 feeds \/ single-feed drain \(median\)\s+0\.90\s+>= 0\.8  ok/);
    expect(text).toMatch(/20 feeds: peak RSS MB; database connections\s+210\.0; 6\s+<= 300  ok/);
    expect(text).toMatch(/idle database statements per poll\s+1\.50\s+<= 2  ok/);
    expect(text).toMatch(/latency p99 ms \(poll 1000 ms\)\s+1,100\s+<= 1250  ok/);
    expect(text).toMatch(/write\s+5\.50\s+5\.50 \/ 5\.50/);
    const table = (text.split('\n\n')[1] ?? '').split('\n');
    expect(table).toHaveLength(26);
    // the value column is right-aligned: every value ends in the same column
    const valueEnds = new Set(
      table.map((line) => {
        const value = line.split(/\s{2,}/)[1] ?? '';
        return line.indexOf(`  ${value}`) + 2 + value.length;
      }),
    );
    expect(valueEnds.size).toBe(1);
  });
});

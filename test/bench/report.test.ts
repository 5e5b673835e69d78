import { describe, expect, test } from 'vitest';
import { checkTargets, formatReport, summaryLine, type BenchResults } from '../../bench/report.js';
import { summarize } from '../../bench/stats.js';

const flat = (ms: number) => summarize([ms]);

function results(overrides: { drain?: number; ceiling?: number; naive?: number; rss?: number; match10k?: number; match1m?: number; p99?: number } = {}): BenchResults {
  const drainRate = overrides.drain ?? 30_000;
  return {
    started_at: '2026-11-21T10:00:00.000Z',
    command: 'npm run bench -- --events 200000',
    machine: {
      cpu_model: 'Test CPU', cores: 2, memory_mb: 4096, load_average_1m_at_start: 0.5, node_version: 'v20.20.0',
      pg_version: '15.20', synchronous_commit: 'on', shared_buffers: '128MB', wal_sync_method: 'fdatasync',
    },
    drain: {
      events: 200_000, pages: 800, seconds: 200_000 / drainRate, events_per_s: drainRate, pages_per_s: drainRate / 250,
      peak_rss_mb: overrides.rss ?? 120, rss_series_mb: [[100, 80]],
      per_page_ms: { fetch: flat(4), fetch_wait: flat(0.5), prepare: flat(1.5), validate: flat(1), write: flat(5.5), commit: flat(1), apply: flat(7) },
    },
    ceiling: { pages: 1_600, events: 400_000, seconds: 10, events_per_s: overrides.ceiling ?? 40_000, pages_per_s: 160 },
    naive: { events: 5_000, seconds: 10, events_per_s: overrides.naive ?? 500 },
    match: { probe_events: 10_000, match_ms_per_page_10k: flat(overrides.match10k ?? 2), match_ms_per_page_1m: flat(overrides.match1m ?? 2.4) },
    latency: { poll_interval_ms: 1_000, rounds: 30, events: 150, latency_ms: { count: 150, mean: 600, p50: 550, p99: overrides.p99 ?? 1_100, max: 1_150 } },
  };
}

describe('checkTargets', () => {
  test.each([
    ['all met', {}, {}],
    ['drain under 0.6 x ceiling', { drain: 23_999 }, { drain_vs_ceiling: false }],
    ['drain exactly 0.6 x ceiling', { drain: 24_000 }, {}],
    ['drain under 20 x naive', { naive: 1_600 }, { drain_vs_naive: false }],
    ['RSS over 200 MB', { rss: 200.1 }, { peak_rss: false }],
    ['match 1M over 1.5 x 10k', { match1m: 3.01 }, { match_scaling: false }],
    ['latency p99 over poll + 250 ms', { p99: 1_251 }, { latency_p99: false }],
  ])('%s', (_, input, failed) => {
    const allMet = { drain_vs_ceiling: true, drain_vs_naive: true, peak_rss: true, match_scaling: true, latency_p99: true };
    expect(checkTargets(results(input))).toEqual({ ...allMet, ...failed });
  });
});

describe('summaryLine', () => {
  test('carries the required fields, rounded, and the ratios', () => {
    const line = summaryLine(results());
    expect(line).toMatchObject({
      events: 200_000,
      events_per_s: 30_000,
      pages_per_s: 120,
      ceiling_events_per_s: 40_000,
      naive_events_per_s: 500,
      ratio_to_ceiling: 0.75,
      ratio_to_naive: 60,
      peak_rss_mb: 120,
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
    const text = formatReport(results({ drain: 20_000 }));
    expect(text).toContain('Test CPU, 2 cores, 4,096 MB; PostgreSQL 15.20, synchronous_commit=on');
    expect(text).toMatch(/drain \/ ceiling\s+0\.50\s+>= 0\.60  MISSED/);
    expect(text).toMatch(/drain \/ naive\s+40\.0\s+>= 20  ok/);
    expect(text).toMatch(/latency p99 ms \(poll 1000 ms\)\s+1,100\s+<= 1250  ok/);
    expect(text).toMatch(/write\s+5\.50\s+5\.50 \/ 5\.50/);
    const table = (text.split('\n\n')[1] ?? '').split('\n');
    expect(table).toHaveLength(12);
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

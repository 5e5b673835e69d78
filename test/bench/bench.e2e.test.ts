import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { NEEDS_POSTGRES, postgresReachable } from '../support/db.js';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIELDS = [
  'events',
  'events_per_s',
  'pages_per_s',
  'ceiling_events_per_s',
  'naive_events_per_s',
  'ratio_to_ceiling',
  'ratio_to_ceiling_min',
  'ratio_to_ceiling_median',
  'ratio_to_naive',
  'peak_rss_mb',
  'wan_20ms_events_per_s',
  'wan_20ms_limit_events_per_s',
  'wan_20ms_connections',
  'idle_cpu_pct_per_5s_poll',
  'idle_rss_mb',
  'idle_db_statements_per_poll',
  'match_ms_per_page_10k',
  'match_ms_per_page_1m',
  'poll_interval_ms',
  'latency_p50_ms',
  'latency_p99_ms',
  'fetch_ms_per_page',
  'validate_ms_per_page',
  'write_ms_per_page',
  'commit_ms_per_page',
  'many_feeds_count',
  'many_feeds_events',
  'many_feeds_events_per_s',
  'many_feeds_ratio_to_single',
  'many_feeds_peak_rss_mb',
  'many_feeds_db_connections',
];

const reachable = await postgresReachable();
let resultsDir: string;
beforeAll(async () => {
  resultsDir = await mkdtemp(join(tmpdir(), 'bench-e2e-'));
});
afterAll(async () => {
  await rm(resultsDir, { recursive: true, force: true });
});

function runBench(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], { cwd: REPO_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// the bench measures a real server: skipped (NEEDS_POSTGRES) on the embedded fallback
test.skipIf(!reachable)(
  `a tiny bench run ends with the JSON summary line and writes its results file (${NEEDS_POSTGRES})`,
  { timeout: 240_000 },
  async () => {
    const { code, stdout, stderr } = await runBench([
      '--events',
      '2000',
      '--drains',
      '2',
      '--ceiling-seconds',
      '1',
      '--naive-seconds',
      '1',
      '--latency-rounds',
      '2',
      '--poll-interval-ms',
      '200',
      '--match-large',
      '20000',
      '--wan-rtt-ms',
      '20',
      '--wan-seconds',
      '0.5',
      '--idle-polls',
      '3',
      '--idle-poll-interval-ms',
      '200',
      '--feeds',
      '4',
      '--results-dir',
      resultsDir,
    ]);
    expect(code, stderr).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    const summary = JSON.parse(lines[lines.length - 1] ?? '') as Record<string, unknown>;
    for (const field of FIELDS) expect(summary[field], field).toEqual(expect.any(Number));
    expect(summary.events).toBe(2000);
    expect(summary.drains_events_per_s).toEqual([expect.any(Number), expect.any(Number)]);
    // the same backlog over 4 feeds, all drained by one process: one lock session however many feeds
    expect(summary.many_feeds_count).toBe(4);
    expect(summary.many_feeds_events).toBe(2000);
    expect(summary.many_feeds_db_connections as number).toBeGreaterThanOrEqual(2);
    expect(summary.many_feeds_db_connections as number).toBeLessThanOrEqual(6);
    expect(summary.ratio_to_ceiling_min as number).toBeLessThanOrEqual(summary.ratio_to_ceiling_median as number);
    // the WAN drain cannot beat its own fetch-bound limit, and reuses its connection
    expect(summary.wan_20ms_events_per_s as number).toBeLessThanOrEqual((summary.wan_20ms_limit_events_per_s as number) * 1.02);
    expect(summary.wan_20ms_connections as number).toBeGreaterThanOrEqual(1);
    // a few polls inside one lease-check interval may need no statement at all; an empty poll that opened a
    // page transaction (BEGIN, lock, statement, COMMIT) would cost 4
    expect(summary.idle_db_statements_per_poll as number).toBeGreaterThanOrEqual(0);
    expect(summary.idle_db_statements_per_poll as number).toBeLessThan(3);
    expect(summary.poll_interval_ms).toBe(200);
    expect(summary.events_per_s as number).toBeGreaterThan(summary.naive_events_per_s as number);
    expect(summary.ceiling_events_per_s as number).toBeGreaterThan(summary.naive_events_per_s as number);
    expect(summary.peak_rss_mb as number).toBeGreaterThan(20);
    expect(summary.peak_rss_mb as number).toBeLessThan(1_000);
    expect(summary.latency_p99_ms as number).toBeGreaterThan(0);
    expect(summary.latency_p99_ms as number).toBeLessThan(200 * 3 + 10_000);
    expect(stdout).toContain('drain / ceiling');
    expect(await readdir(resultsDir)).toEqual([`${new Date().toISOString().slice(0, 10)}.json`]);
  },
);

test('bad input exits 2 with the flag named and nothing on stdout', async () => {
  const { code, stdout, stderr } = await runBench(['--events', 'many']);
  expect(code).toBe(2);
  expect(stderr).toContain('--events: must be a number');
  expect(stdout).toBe('');
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { DAEMON_NODE_FLAGS } from '../src/daemon/daemon-node-flags.js';
import { BenchProcessError } from './bench-process-error.js';
import type { BenchDatabase } from './database.js';
import { expectCleanExit, spawnNode } from './processes.js';
import { registerFixturePrescriptions } from './register.js';
import { sampleMemory } from './rss.js';
import type { SandboxProcess } from './sandbox-process.js';
import { summarize, type Summary } from './stats.js';

/** Several accounts drained at once by one daemon process (issue 12 item 5). */
export interface ManyFeedsResult {
  feeds: number;
  events: number;
  pages: number;
  /** the slowest feed's drain: the feeds start together, so this is how long the whole backlog took */
  seconds: number;
  /** every feed's events over `seconds` */
  events_per_s: number;
  /** each feed's own rate (its events over its own drain time) */
  per_feed_events_per_s: Summary;
  /** the process from spawn to exit: startup and migration check included, not in `seconds` */
  process_seconds: number;
  peak_rss_mb: number;
  rss_series_mb: Array<[number, number]>;
  /** most database connections the process held at once (pg_stat_activity, by its application_name) */
  peak_db_connections: number;
}

/** One line of `run --once --json` with several feeds. */
const feedLineSchema = z.object({
  feed: z.string(),
  drained: z.boolean(),
  pages: z.number(),
  events: z.number(),
  matched: z.number(),
  elapsed_ms: z.number(),
});
export type FeedDrainLine = z.output<typeof feedLineSchema>;

/** The feeds' names, feed-01 .. feed-NN (FEEDS_FILE names: a-z 0-9 _ -). */
export function feedNames(count: number): string[] {
  const width = String(count).length;
  return Array.from({ length: count }, (_, i) => `feed-${String(i + 1).padStart(width, '0')}`);
}

/** `total` prescriptions split over `feeds` as evenly as whole prescriptions allow (the first feeds take the remainder). */
export function splitPrescriptions(total: number, feeds: number): number[] {
  const base = Math.floor(total / feeds);
  return Array.from({ length: feeds }, (_, i) => base + (i < total % feeds ? 1 : 0));
}

/** Totals of one multi-feed drain from its per-feed summary lines; every feed must have drained. */
export function summarizeFeedDrains(
  lines: readonly FeedDrainLine[],
): Pick<ManyFeedsResult, 'feeds' | 'events' | 'pages' | 'seconds' | 'events_per_s' | 'per_feed_events_per_s'> {
  const stopped = lines.filter((line) => !line.drained).map((line) => line.feed);
  if (stopped.length > 0) throw new BenchProcessError(`many feeds: ${stopped.join(', ')} stopped before caught up`);
  // each feed's events match its own local prescriptions only: an unmatched one means a bench setup mistake
  const unmatched = lines.filter((line) => line.matched !== line.events).map((line) => line.feed);
  if (unmatched.length > 0) throw new BenchProcessError(`many feeds: ${unmatched.join(', ')} left events unmatched`);
  const events = lines.reduce((sum, line) => sum + line.events, 0);
  const seconds = Math.max(...lines.map((line) => line.elapsed_ms)) / 1000;
  return {
    feeds: lines.length,
    events,
    pages: lines.reduce((sum, line) => sum + line.pages, 0),
    seconds,
    events_per_s: events / seconds,
    per_feed_events_per_s: summarize(lines.map((line) => (line.events * 1000) / Math.max(1, line.elapsed_ms))),
  };
}

/**
 * Seeds `prescriptions` split over `feeds` accounts of one sandbox (each its own credential and feed,
 * prefix mf<i>), registers each feed's matching local prescriptions in that feed, then drains them all
 * with ONE compiled daemon, `intake-sync run --once --json` with a FEEDS_FILE: one worker per feed on one
 * lock session, as deployed. Its RSS and database connections are sampled while it runs.
 */
export async function measureManyFeeds(
  cliEntry: string,
  sandbox: SandboxProcess,
  db: BenchDatabase,
  prescriptions: number,
  feeds: number,
): Promise<ManyFeedsResult> {
  const names = feedNames(feeds);
  const counts = splitPrescriptions(prescriptions, feeds);
  const entries = [];
  for (const [i, name] of names.entries()) {
    const key = `bench-${name}`;
    const secret = `bench-secret-${name}`;
    await sandbox.addCredential(key, secret);
    const count = counts[i] ?? 0;
    await sandbox.seed(count, `mf${i + 1}`, key);
    await registerFixturePrescriptions(db.database.db, `mf${i + 1}`, 0, count, name);
    entries.push({ name, base_url: sandbox.baseUrl, api_key: key, api_secret: secret });
  }
  await db.sql`checkpoint`;
  const dir = await mkdtemp(join(tmpdir(), 'intake-bench-feeds-'));
  try {
    const feedsFile = join(dir, 'feeds.json');
    await writeFile(feedsFile, JSON.stringify(entries));
    // FEEDS_FILE beside INTAKE_API_* or FEED_NAME is refused: whatever the bench's own environment holds
    const { INTAKE_API_BASE_URL: _u, INTAKE_API_KEY: _k, INTAKE_API_SECRET: _s, FEED_NAME: _f, ...env } = process.env;
    const startedAt = performance.now();
    const daemon = spawnNode('daemon (many feeds)', [...DAEMON_NODE_FLAGS, cliEntry, 'run', '--once', '--json'], {
      ...env,
      DATABASE_URL: db.url,
      FEEDS_FILE: feedsFile,
      LOG_LEVEL: 'warn',
    });
    const memory = sampleMemory(daemon.pid, 100);
    const connections = sampleConnections(db, daemon.pid, 100);
    let exitedAt: number;
    try {
      await expectCleanExit('daemon (many feeds)', daemon);
      exitedAt = performance.now();
    } finally {
      await daemon.stop();
    }
    const rss = memory.stop();
    const peakConnections = await connections.stop();
    const lines = daemon.jsonLines().map((line) => feedLineSchema.parse(line));
    if (lines.length !== feeds) throw new BenchProcessError(`many feeds: ${lines.length} summary lines for ${feeds} feeds`);
    return {
      ...summarizeFeedDrains(lines),
      process_seconds: (exitedAt - startedAt) / 1000,
      peak_rss_mb: rss.peakKb / 1024,
      rss_series_mb: rss.series.map(([ms, kb]) => [ms, Math.round(kb / 102.4) / 10]),
      peak_db_connections: peakConnections,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Samples how many sessions the process `pid` holds (its application_name is intake-sync[pid], the lease's too). */
function sampleConnections(db: BenchDatabase, pid: number, intervalMs: number): { stop(): Promise<number> } {
  let peak = 0;
  let pending: Promise<void> = Promise.resolve();
  const pattern = `intake-sync[${pid}]%`;
  const timer = setInterval(() => {
    pending = db.sql<Array<{ n: number }>>`select count(*)::int as n from pg_stat_activity where application_name like ${pattern}`.then(
      ([row]) => void (peak = Math.max(peak, row?.n ?? 0)),
      () => {},
    );
  }, intervalMs);
  return {
    async stop() {
      clearInterval(timer);
      await pending;
      return peak;
    },
  };
}

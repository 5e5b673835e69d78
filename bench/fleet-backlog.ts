// Backlogged feeds among idle ones: `backlogged` accounts are seeded with events due at once (their
// local prescriptions registered first, so they match), and the replicas drain them while the other
// feeds keep polling. Throughput over the drain itself (first page applied anywhere to the last feed
// caught up), apart from the start (each feed's wait for its next poll slot, and the seeding), and
// the spread of the feeds' finish times (no starving).
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchProcessError } from './bench-process-error.js';
import type { BenchDatabase } from './database.js';
import { type DrainCost, drainCost, drainSnapshot } from './fleet-drain-cost.js';
import { readLeadership } from './fleet-leases.js';
import type { FleetFeed, Replica } from './fleet-replica.js';
import { registerFixturePrescriptions } from './register.js';
import type { SandboxProcess } from './sandbox-process.js';
import { round, summarize, type Summary } from './stats.js';

/** How often the bench reads every backlogged feed's progress. */
const SAMPLE_MS = 100;

/** A sample's spread, its least value included. */
export type Spread = Summary & { min: number };

/** The drain of the backlogged feeds. */
export interface FleetBacklog {
  feeds: number;
  events: number;
  /** seeding all the feeds' events at the operator (the first feeds drain meanwhile) */
  seeding_s: number;
  /** from the end of seeding to the last feed caught up (includes each feed's wait for its poll slot) */
  seconds: number;
  events_per_s: number;
  /** from the first event applied anywhere to the last feed caught up: the drain itself */
  drain_seconds: number;
  drain_events_per_s: number;
  /** per feed, seconds from its own seeding to its first applied page: the start (poll slot, lease), not throughput */
  first_page_s: Spread;
  /** per feed, seconds from its first applied page to its catch-up: its own drain */
  feed_drain_s: Spread;
  /** per feed, seconds from the first page applied anywhere to its catch-up: the spread says whether any starved */
  caught_up_after_first_page_s: Spread;
  /** per feed, seconds from the end of seeding to its own catch-up (earlier figures' measure) */
  caught_up_s: Summary;
  /** backlogged feeds each replica led when seeding began: a replica applies one page at a time, so the busiest sets the pace */
  backlogged_led_per_replica: number[];
  /** from the first page applied anywhere to the last feed caught up: CPU, statements and requests */
  cost: DrainCost;
}

/** Pure: which of `feeds` get the backlog: `count` of them spread evenly over the list (every k-th). */
export function backloggedFeeds<T>(feeds: readonly T[], count: number): T[] {
  const picked = Math.min(count, feeds.length);
  const step = feeds.length / Math.max(1, picked);
  return Array.from({ length: picked }, (_, i) => feeds[Math.floor(i * step)] as T);
}

/** One feed's times (ms, performance.now()) as the bench saw them. */
export interface FeedDrainTimes {
  seededAt: number;
  firstPageAt: number;
  caughtUpAt: number;
}

/** Pure: the figures of a drain from each feed's times, the end of seeding and the events seeded. */
export function backlogFigures(
  times: readonly FeedDrainTimes[],
  events: number,
  seedingStartedAt: number,
  seededAt: number,
): Omit<FleetBacklog, 'feeds' | 'events' | 'cost' | 'backlogged_led_per_replica'> {
  const firstPage = Math.min(...times.map((t) => t.firstPageAt));
  const last = Math.max(...times.map((t) => t.caughtUpAt));
  const seconds = (last - seededAt) / 1000;
  const drainSeconds = Math.max(0.1, (last - firstPage) / 1000);
  const spread = (values: number[]): Spread => {
    const summary = summarize(values);
    return {
      count: summary.count,
      min: round(Math.min(...values), 2),
      mean: round(summary.mean, 2),
      p50: round(summary.p50, 2),
      p99: round(summary.p99, 2),
      max: round(summary.max, 2),
    };
  };
  return {
    seeding_s: round((seededAt - seedingStartedAt) / 1000, 2),
    seconds: round(seconds, 2),
    events_per_s: Math.round(events / Math.max(0.1, seconds)),
    drain_seconds: round(drainSeconds, 2),
    drain_events_per_s: Math.round(events / drainSeconds),
    first_page_s: spread(times.map((t) => Math.max(0, t.firstPageAt - t.seededAt) / 1000)),
    feed_drain_s: spread(times.map((t) => (t.caughtUpAt - t.firstPageAt) / 1000)),
    caught_up_after_first_page_s: spread(times.map((t) => (t.caughtUpAt - firstPage) / 1000)),
    caught_up_s: summarize(times.map((t) => (t.caughtUpAt - seededAt) / 1000)),
  };
}

/** Seeds and drains the backlog; gives up after `timeoutMs` naming the feeds not caught up. */
export async function measureBacklog(
  sandbox: SandboxProcess,
  db: BenchDatabase,
  replicas: readonly Replica[],
  feeds: readonly FleetFeed[],
  prescriptionsPerFeed: number,
  timeoutMs: number,
): Promise<FleetBacklog> {
  for (const [i, feed] of feeds.entries()) {
    await registerFixturePrescriptions(db.database.db, `fb${i}`, 0, prescriptionsPerFeed, feed.name);
  }
  const names = feeds.map((feed) => feed.name);
  // before seeding: a feed seeded early is polled (and applies) while the later ones are seeded
  const baseline = await progress(db, names);
  const leadership = await readLeadership(db.sql, replicas, names);
  const backloggedLed = replicas.map(
    (replica) => names.filter((name) => leadership.holderOf.get(name)?.startsWith(replica.applicationName)).length,
  );
  const expected = new Map<string, number>();
  const seededAt = new Map<string, number>();
  const firstPageAt = new Map<string, number>();
  const caughtUpAt = new Map<string, number>();
  const seedingStartedAt = performance.now();
  let seedingEndedAt: number | undefined;
  // the progress is sampled while seeding goes on, so an early feed's first page and catch-up are seen
  const seeding = (async () => {
    for (const [i, feed] of feeds.entries()) {
      const seeded = await sandbox.seed(prescriptionsPerFeed, `fb${i}`, feed.key);
      seededAt.set(feed.name, performance.now());
      expected.set(feed.name, seeded.events);
    }
    seedingEndedAt = performance.now();
  })();
  let costFrom: Awaited<ReturnType<typeof drainSnapshot>> | undefined;
  let seedingFailed: unknown;
  seeding.catch((error: unknown) => {
    seedingFailed = error;
  });
  while (caughtUpAt.size < names.length) {
    if (seedingFailed !== undefined) throw seedingFailed;
    const now = performance.now();
    if (now - seedingStartedAt > timeoutMs) {
      const behind = names.filter((name) => !caughtUpAt.has(name));
      throw new BenchProcessError(
        `backlog: ${behind.length} feeds not caught up after ${timeoutMs / 1000} s (${behind.slice(0, 5).join(', ')} ...); ` +
          `${seededAt.size} of ${names.length} seeded; replicas' stderr tails:\n` +
          replicas.map((replica) => `${replica.label}: ${replica.child.stderrTail()}`).join('\n'),
      );
    }
    const done = await progress(db, names);
    for (const name of names) {
      const applied = (done.get(name) ?? 0) - (baseline.get(name) ?? 0);
      if (applied > 0 && !firstPageAt.has(name)) firstPageAt.set(name, now);
      const want = expected.get(name);
      if (want !== undefined && !caughtUpAt.has(name) && applied >= want) caughtUpAt.set(name, now);
    }
    if (costFrom === undefined && firstPageAt.size > 0) costFrom = await drainSnapshot(replicas);
    await sleep(SAMPLE_MS);
  }
  const costTo = await drainSnapshot(replicas);
  await seeding;
  const events = [...expected.values()].reduce((sum, n) => sum + n, 0);
  const times = names.map((name) => ({
    seededAt: seededAt.get(name) as number,
    firstPageAt: firstPageAt.get(name) as number,
    caughtUpAt: caughtUpAt.get(name) as number,
  }));
  return {
    feeds: names.length,
    events,
    ...backlogFigures(times, events, seedingStartedAt, seedingEndedAt as number),
    backlogged_led_per_replica: backloggedLed,
    cost: drainCost(replicas, costFrom ?? costTo, costTo),
  };
}

/** Events each feed has applied or quarantined (feed_checkpoints), by feed name. */
async function progress(db: BenchDatabase, names: readonly string[]): Promise<Map<string, number>> {
  const rows = await db.sql<Array<{ feed: string; n: string }>>`
    select feed, (events_applied + events_quarantined)::text as n from intake_sync.feed_checkpoints where feed = any(${names as string[]})`;
  return new Map(rows.map((row) => [row.feed, Number(row.n)]));
}

// Backlogged feeds among idle ones: `backlogged` accounts are seeded with events due at once (their
// local prescriptions registered first, so they match), and the replicas drain them while the other
// feeds keep polling. Throughput over all of them, and the spread of their drain times (no starving).
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchProcessError } from './bench-process-error.js';
import type { BenchDatabase } from './database.js';
import type { FleetFeed } from './fleet-replica.js';
import { registerFixturePrescriptions } from './register.js';
import type { SandboxProcess } from './sandbox-process.js';
import { summarize, type Summary } from './stats.js';

/** The drain of the backlogged feeds. */
export interface FleetBacklog {
  feeds: number;
  events: number;
  /** from the end of seeding to the last feed caught up (includes each feed's wait for its poll slot) */
  seconds: number;
  events_per_s: number;
  /** from the first event applied anywhere to the last feed caught up: the drain itself */
  drain_seconds: number;
  drain_events_per_s: number;
  /** per feed, seconds from the end of seeding to its own catch-up: the spread says whether any starved */
  caught_up_s: Summary;
}

/** Pure: which of `feeds` get the backlog: `count` of them spread evenly over the list (every k-th). */
export function backloggedFeeds<T>(feeds: readonly T[], count: number): T[] {
  const picked = Math.min(count, feeds.length);
  const step = feeds.length / Math.max(1, picked);
  return Array.from({ length: picked }, (_, i) => feeds[Math.floor(i * step)] as T);
}

/** Seeds and drains the backlog; gives up after `timeoutMs` naming the feeds not caught up. */
export async function measureBacklog(
  sandbox: SandboxProcess,
  db: BenchDatabase,
  feeds: readonly FleetFeed[],
  prescriptionsPerFeed: number,
  timeoutMs: number,
): Promise<FleetBacklog> {
  const expected = new Map<string, number>();
  for (const [i, feed] of feeds.entries()) {
    await registerFixturePrescriptions(db.database.db, `fb${i}`, 0, prescriptionsPerFeed, feed.name);
  }
  // before seeding: a feed seeded early is polled (and applies) while the later ones are seeded
  const baseline = await progress(
    db,
    feeds.map((feed) => feed.name),
  );
  for (const [i, feed] of feeds.entries()) {
    const seeded = await sandbox.seed(prescriptionsPerFeed, `fb${i}`, feed.key);
    expected.set(feed.name, seeded.events);
  }
  const names = [...expected.keys()];
  // the drain times count from the end of seeding (the first feeds seeded may have started before)
  const seededAt = performance.now();
  let firstProgressAt: number | undefined;
  const caughtUpAt = new Map<string, number>();
  while (caughtUpAt.size < names.length) {
    const now = performance.now();
    if (now - seededAt > timeoutMs) {
      const behind = names.filter((name) => !caughtUpAt.has(name));
      throw new BenchProcessError(
        `backlog: ${behind.length} feeds not caught up after ${timeoutMs / 1000} s (${behind.slice(0, 5).join(', ')} ...)`,
      );
    }
    const done = await progress(db, names);
    for (const name of names) {
      const applied = (done.get(name) ?? 0) - (baseline.get(name) ?? 0);
      if (applied > 0) firstProgressAt ??= now;
      if (!caughtUpAt.has(name) && applied >= (expected.get(name) ?? 0)) caughtUpAt.set(name, now);
    }
    await sleep(100);
  }
  const events = [...expected.values()].reduce((sum, n) => sum + n, 0);
  const lastAt = Math.max(...caughtUpAt.values());
  const seconds = (lastAt - seededAt) / 1000;
  const drainSeconds = (lastAt - (firstProgressAt ?? seededAt)) / 1000;
  return {
    feeds: names.length,
    events,
    seconds,
    events_per_s: events / seconds,
    drain_seconds: drainSeconds,
    drain_events_per_s: events / Math.max(0.1, drainSeconds),
    caught_up_s: summarize([...caughtUpAt.values()].map((at) => (at - seededAt) / 1000)),
  };
}

/** Events each feed has applied or quarantined (feed_checkpoints), by feed name. */
async function progress(db: BenchDatabase, names: readonly string[]): Promise<Map<string, number>> {
  const rows = await db.sql<Array<{ feed: string; n: string }>>`
    select feed, (events_applied + events_quarantined)::text as n from intake_sync.feed_checkpoints where feed = any(${names as string[]})`;
  return new Map(rows.map((row) => [row.feed, Number(row.n)]));
}

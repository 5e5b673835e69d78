// Who leads which feed, read from the lease table the replicas coordinate through, and the waits
// for a full share that the rebalance figures are.
import { setTimeout as sleep } from 'node:timers/promises';
import type postgres from 'postgres';
import { BenchProcessError } from './bench-process-error.js';
import { isFullShare, type LeaderlessTracker } from './fleet-share.js';
import type { Replica } from './fleet-replica.js';

/** How often the bench reads the lease table while it waits (the resolution of the rebalance times). */
const SAMPLE_MS = 100;

/** Feeds led per replica (in the order given), the feeds with no live leader, and each led feed's holder. */
export interface Leadership {
  led: number[];
  leaderless: string[];
  /** feed -> application_name of the replica leading it */
  holderOf: Map<string, string>;
}

/** Reads the live leases: a lease counts while unexpired and its holder's backend is alive (as the daemon judges it). */
export async function readLeadership(sql: postgres.Sql, replicas: readonly Replica[], feeds: readonly string[]): Promise<Leadership> {
  const rows = await sql<Array<{ feed: string; holder: string }>>`
    select l.feed, a.application_name as holder
      from intake_sync.feed_leases l join pg_catalog.pg_stat_activity a on a.pid = l.holder_pid
     where l.expires_at > now()`;
  const holderOf = new Map(rows.map((row) => [row.feed, row.holder]));
  return {
    led: replicas.map((replica) => rows.filter((row) => row.holder.startsWith(replica.applicationName)).length),
    leaderless: feeds.filter((feed) => !holderOf.has(feed)),
    holderOf,
  };
}

/** Sessions each replica holds now (pg_stat_activity, by its application_name's prefix: the lease session adds to it). */
export async function readConnections(sql: postgres.Sql, replicas: readonly Replica[]): Promise<number[]> {
  const rows = await sql<Array<{ name: string }>>`
    select application_name as name from pg_catalog.pg_stat_activity where application_name like 'intake-sync[%'`;
  return replicas.map((replica) => rows.filter((row) => row.name.startsWith(replica.applicationName)).length);
}

/**
 * Waits until `replicas` hold a full share of `feeds` (every feed led, each replica within one of
 * ceil(feeds / replicas)); returns the ms it took from `sinceMs` (a performance.now() time) and the
 * last reading. Every reading feeds `tracker` when given. After `timeoutMs` it returns `ms: null`
 * with the last reading (the bench reports a share not reached, and goes on); a replica that
 * exits meanwhile is an error.
 */
export async function waitForFullShare(
  sql: postgres.Sql,
  replicas: readonly Replica[],
  feeds: readonly string[],
  sinceMs: number,
  timeoutMs: number,
  tracker?: LeaderlessTracker,
): Promise<{ ms: number | null; leadership: Leadership }> {
  for (;;) {
    const leadership = await readLeadership(sql, replicas, feeds);
    const now = performance.now();
    tracker?.sample(now, leadership.leaderless);
    if (isFullShare(leadership.led, feeds.length)) return { ms: now - sinceMs, leadership };
    if (now - sinceMs > timeoutMs) return { ms: null, leadership };
    const gone = replicas.find((replica) => !replica.running());
    if (gone)
      throw new BenchProcessError(
        `replica ${gone.label} exited while the bench waited for a full share; stderr tail:\n${gone.child.stderrTail()}`,
      );
    await sleep(SAMPLE_MS);
  }
}

/**
 * Waits until `replica` has opened its lock session (its application_name with ` lease` in
 * pg_stat_activity): past its start-up writes (feed registration), which replicas started at the same
 * instant contend on. Gives up after `timeoutMs`.
 */
export async function waitForLeaseSession(sql: postgres.Sql, replica: Replica, timeoutMs: number): Promise<void> {
  const started = performance.now();
  const pattern = `${replica.applicationName} lease%`;
  for (;;) {
    const [row] = await sql<
      Array<{ n: number }>
    >`select count(*)::int as n from pg_catalog.pg_stat_activity where application_name like ${pattern}`;
    if ((row?.n ?? 0) > 0) return;
    if (!replica.running())
      throw new BenchProcessError(`replica ${replica.label} exited at start; stderr tail:\n${replica.child.stderrTail()}`);
    if (performance.now() - started > timeoutMs)
      throw new BenchProcessError(`replica ${replica.label} opened no lock session in ${timeoutMs / 1000} s`);
    await sleep(SAMPLE_MS);
  }
}

/**
 * Reads the leadership into `tracker` every SAMPLE_MS until `until` settles (a replica starting:
 * the others count it as a member, and give feeds up for it, before it has started), then resolves
 * as `until` does.
 */
export async function sampleUntil<T>(
  sql: postgres.Sql,
  replicas: readonly Replica[],
  feeds: readonly string[],
  tracker: LeaderlessTracker,
  until: Promise<T>,
): Promise<T> {
  let settled = false;
  const done = until.finally(() => {
    settled = true;
  });
  while (!settled) {
    const leadership = await readLeadership(sql, replicas, feeds);
    tracker.sample(performance.now(), leadership.leaderless);
    await Promise.race([done.catch(() => undefined), sleep(SAMPLE_MS)]);
  }
  return done;
}

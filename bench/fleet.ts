// `npm run bench:fleet`: FEEDS accounts of one sandbox operator served by 1, 2 and 4 replicas (real
// `intake-sync run` processes, compiled as shipped). Per replica count, on a fresh database and a
// fresh sandbox: the time to a full share from a cold start, the idle cost (CPU, RSS, statements and
// operator requests per second, the worst second against the mean, sessions per replica), the time
// to a full share after one more replica joins and after kill -9 of one (with the longest a feed went
// without a leader), then the drain of BACKLOGGED feeds among the idle ones. Figures: docs/performance.md.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runBench } from './bench-main.js';
import { compileDrainWorker } from './compile-worker.js';
import { type BenchDatabase, createBenchDatabase, DEFAULT_SERVER_URL } from './database.js';
import { parseFleetArgs, type FleetArgs } from './fleet-args.js';
import { backloggedFeeds, measureBacklog } from './fleet-backlog.js';
import { measureFleetIdle } from './fleet-idle.js';
import { readLeadership, sampleUntil, waitForFullShare, waitForLeaseSession } from './fleet-leases.js';
import { type FleetFeed, type Replica, type ReplicaOptions, startReplica } from './fleet-replica.js';
import { LeaderlessTracker } from './fleet-share.js';
import { describeMachine } from './machine.js';
import { feedNames } from './many-feeds.js';
import { REPO_ROOT } from './processes.js';
import { startSandboxProcess } from './sandbox-process.js';

/** How long the bench waits for a full share before it reports it not reached (null) and goes on. */
const SHARE_TIMEOUT_MS = 60_000;
/** How long one replica's start (up to its lock session) may take: 500 feeds' start-up writes beside running replicas, on a loaded machine. */
const START_TIMEOUT_MS = 300_000;
/** How long the backlogged feeds may take to catch up before the bench fails. */
const BACKLOG_TIMEOUT_MS = 300_000;

/** ms as seconds; null (a full share not reached in SHARE_TIMEOUT_MS) stays null. */
const seconds = (ms: number | null) => (ms === null ? null : ms / 1000);
const load = () => Math.round((loadavg()[0] ?? 0) * 100) / 100;

/** One replica count's run, start to stop. */
async function runFleet(args: FleetArgs, replicaCount: number, cliEntry: string, dir: string, serverUrl: string, stamp: string) {
  const sandbox = await startSandboxProcess(`fleet-${replicaCount}`);
  const db = await createBenchDatabase(serverUrl, `${stamp}_r${replicaCount}`);
  const replicas: Replica[] = [];
  try {
    const feeds: FleetFeed[] = feedNames(args.feeds).map((name) => ({ name, key: `fleet-${name}`, secret: `fleet-secret-${name}` }));
    for (const feed of feeds) await sandbox.addCredential(feed.key, feed.secret);
    const names = feeds.map((feed) => feed.name);
    const env: Record<string, string> = { LEASE_RETRY_MS: String(args.leaseRetryMs), LEASE_TTL_MS: String(args.leaseTtlMs) };
    if (args.operatorMaxRps !== undefined) env.OPERATOR_MAX_RPS = String(args.operatorMaxRps);
    if (args.pollIntervalMs !== undefined) env.POLL_INTERVAL_MS = String(args.pollIntervalMs);
    const options: ReplicaOptions = { cliEntry, operatorBaseUrl: sandbox.baseUrl, databaseUrl: db.url, feeds, dir, env };
    let next = 1;
    const start = () => startReplica(`${replicaCount}-${next++}`, options);

    const startedAt = performance.now();
    // one after another, each once its lock session is open: replicas started at the same instant
    // contend on their start-up writes, and one of them exited with a lock timeout (55P03) on the
    // loaded bench machine (docs/performance.md)
    for (let i = 0; i < replicaCount; i++) {
      const replica = await start();
      replicas.push(replica);
      await waitForLeaseSession(db.sql, replica, START_TIMEOUT_MS);
    }
    const cold = await waitForFullShare(db.sql, replicas, names, startedAt, SHARE_TIMEOUT_MS);
    await sleep(args.warmupSeconds * 1000);
    const churn = args.backlogOnly ? undefined : await idleJoinAndKill(db.sql, replicas, names, start, args);
    const loadBeforeBacklog = load();
    const backlog =
      args.backlogged > 0
        ? await measureBacklog(
            sandbox,
            db,
            replicas,
            backloggedFeeds(feeds, args.backlogged),
            args.backlogPrescriptions,
            BACKLOG_TIMEOUT_MS,
          )
        : undefined;
    return {
      replicas: replicaCount,
      feeds: args.feeds,
      cold_start_full_share_s: seconds(cold.ms),
      leaderless_after_cold_start: cold.leadership.leaderless.length,
      led_per_replica: cold.leadership.led,
      load_average_1m: { ...churn?.load, before_backlog: loadBeforeBacklog, after_backlog: load() },
      ...churn?.figures,
      backlog,
    };
  } finally {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await sandbox.stop();
    await db.close(false);
  }
}

/** The idle window, one replica joining and kill -9 of the oldest (the replica count is the same after). */
async function idleJoinAndKill(
  sql: BenchDatabase['sql'],
  replicas: Replica[],
  names: string[],
  start: () => Promise<Replica>,
  args: FleetArgs,
) {
  const replicaCount = replicas.length;
  const loadBeforeIdle = load();
  const idle = await measureFleetIdle(sql, replicas, args.feeds, args.idleSeconds);
  const loadAfterIdle = load();

  // a feed the others give up for the new replica has no leader until it is taken: how long, at most
  const joinTracker = new LeaderlessTracker();
  const joinedAt = performance.now();
  joinTracker.sample(joinedAt, []);
  const joiner = start();
  const joined = await sampleUntil(sql, replicas, names, joinTracker, joiner).then(async (replica) => {
    replicas.push(replica);
    return waitForFullShare(sql, replicas, names, joinedAt, SHARE_TIMEOUT_MS, joinTracker);
  });

  // kill -9 the oldest replica: it leads a full share, and its sessions end with it
  const victim = replicas.shift() as Replica;
  const before = await readLeadership(sql, [victim], names);
  const tracker = new LeaderlessTracker();
  const killedAt = performance.now();
  tracker.sample(
    killedAt,
    names.filter((name) => before.holderOf.get(name)?.startsWith(victim.applicationName)),
  );
  await victim.kill();
  const killed = await waitForFullShare(sql, replicas, names, killedAt, SHARE_TIMEOUT_MS, tracker);
  return {
    load: { before_idle: loadBeforeIdle, after_idle: loadAfterIdle },
    figures: {
      idle,
      join: {
        replicas_after: replicaCount + 1,
        full_share_s: seconds(joined.ms),
        led_per_replica: joined.leadership.led,
        leaderless: joined.leadership.leaderless.length,
        longest_leaderless_s: joinTracker.longestMs(performance.now()) / 1000,
        bound_s: (args.leaseTtlMs + args.leaseRetryMs) / 1000,
      },
      kill: {
        replicas_after: replicaCount,
        full_share_s: seconds(killed.ms),
        leaderless: killed.leadership.leaderless.length,
        longest_leaderless_s: tracker.longestMs(performance.now()) / 1000,
        // the goal: no feed without a leader longer than LEASE_TTL_MS plus one lease check
        bound_s: (args.leaseTtlMs + args.leaseRetryMs) / 1000,
        led_per_replica: killed.leadership.led,
      },
    },
  };
}

async function main(): Promise<void> {
  const args = parseFleetArgs(process.argv.slice(2));
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const stamp = `intake_benchfleet_${randomBytes(3).toString('hex')}`;
  const startedAt = new Date().toISOString();
  const worker = await compileDrainWorker();
  const dir = await mkdtemp(join(tmpdir(), 'intake-bench-fleet-'));
  try {
    const probe = await createBenchDatabase(serverUrl, `${stamp}_m`);
    const machine = await describeMachine(probe.sql);
    await probe.close(false);
    const runs = [];
    for (const replicaCount of args.replicas) {
      const run = await runFleet(args, replicaCount, worker.cliEntry, dir, serverUrl, stamp);
      process.stdout.write(`${JSON.stringify(run)}\n`);
      runs.push(run);
    }
    const folder = resolve(REPO_ROOT, args.resultsDir);
    await mkdir(folder, { recursive: true });
    const path = join(
      folder,
      `${startedAt.slice(0, 10)}-fleet${args.backlogOnly ? '-backlog' : ''}-${startedAt.slice(11, 19).replaceAll(':', '')}.json`,
    );
    await writeFile(path, `${JSON.stringify({ started_at: startedAt, args, machine, load_average_1m_at_end: load(), runs }, null, 2)}\n`);
    process.stderr.write(`bench:fleet: results in ${path}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
    await worker.remove();
  }
}

await runBench('bench:fleet', main);

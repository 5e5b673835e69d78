// One replica of the fleet bench: `intake-sync run` (compiled, the daemon's V8 flags) with the
// bench's FEEDS_FILE, its database connections through a statement-counting proxy and its operator
// requests through a proxy that records each request's start.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DAEMON_NODE_FLAGS } from '../src/daemon/daemon-node-flags.js';
import { cpuSeconds } from './cpu-sampler.js';
import { type DelayProxy, startDelayProxy } from './delay-proxy.js';
import { requestStartObserver } from './fleet-request-rate.js';
import { type PgMessageCounts, pgMessageCounter } from './pg-message-counter.js';
import { type BenchChild, spawnNode } from './processes.js';
import { readMemory } from './rss.js';

/** One feed of the bench's FEEDS_FILE: its name and its sandbox account. */
export interface FleetFeed {
  name: string;
  key: string;
  secret: string;
}

/** What a replica is started with. */
export interface ReplicaOptions {
  cliEntry: string;
  /** the sandbox's base URL (…/intake_api/<version>); the replica reaches it through its own proxy */
  operatorBaseUrl: string;
  databaseUrl: string;
  feeds: readonly FleetFeed[];
  /** folder for the replica's FEEDS_FILE */
  dir: string;
  /** environment on top of the bench's own (OPERATOR_MAX_RPS, POLL_INTERVAL_MS, ...) */
  env: Record<string, string>;
}

/** A running replica and what its proxies counted so far. */
export interface Replica {
  label: string;
  pid: number;
  /** how its sessions' application_name starts in pg_stat_activity (the lease session's adds ` lease @host`) */
  applicationName: string;
  /** start times (performance.now()) of its requests to the operator */
  requestTimes: number[];
  statements: PgMessageCounts;
  child: BenchChild;
  /** false once the process has exited, however */
  running(): boolean;
  cpuSeconds(): Promise<number | undefined>;
  rssMb(): Promise<number | undefined>;
  /** kill -9, no goodbye: its sessions end with the process */
  kill(): Promise<void>;
  /** SIGTERM, the daemon's orderly stop; then its proxies close */
  stop(): Promise<void>;
}

/** Starts one replica; it is running (not yet leading anything) when this returns. */
export async function startReplica(label: string, options: ReplicaOptions): Promise<Replica> {
  const statements: PgMessageCounts = { simpleQueries: 0, executes: 0 };
  const requestTimes: number[] = [];
  const database = new URL(options.databaseUrl);
  const operator = new URL(options.operatorBaseUrl);
  const proxies: DelayProxy[] = [];
  const dbProxy = await startDelayProxy(Number(database.port || 5432), 0, () => pgMessageCounter(statements));
  proxies.push(dbProxy);
  const operatorProxy = await startDelayProxy(Number(operator.port), 0, requestStartObserver(requestTimes));
  proxies.push(operatorProxy);
  database.hostname = '127.0.0.1';
  database.port = String(dbProxy.port);
  operator.port = String(operatorProxy.port);
  const baseUrl = operator.toString().replace(/\/$/, '');
  const feedsFile = join(options.dir, `feeds-${label}.json`);
  await writeFile(
    feedsFile,
    JSON.stringify(options.feeds.map((feed) => ({ name: feed.name, base_url: baseUrl, api_key: feed.key, api_secret: feed.secret }))),
  );
  // FEEDS_FILE beside the single-feed variables is refused: whatever the bench's own environment holds
  const { INTAKE_API_BASE_URL: _u, INTAKE_API_KEY: _k, INTAKE_API_SECRET: _s, FEED_NAME: _f, ...env } = process.env;
  const child = spawnNode(`replica ${label}`, [...DAEMON_NODE_FLAGS, options.cliEntry, 'run'], {
    ...env,
    ...options.env,
    DATABASE_URL: database.toString(),
    FEEDS_FILE: feedsFile,
    // migrated by the bench, as a fleet is by its migrate Job (the Kubernetes kit): a replica that
    // migrates on start re-applies the SQL API in a transaction beside the running ones
    MIGRATE_ON_START: 'false',
    HEALTH_PORT: '0',
    LOG_LEVEL: 'warn',
  });
  let running = true;
  void child.exited.then(() => (running = false));
  const closeProxies = () => Promise.all(proxies.map((proxy) => proxy.close())).then(() => {});
  return {
    label,
    pid: child.pid,
    applicationName: `intake-sync[${child.pid}]`,
    requestTimes,
    statements,
    child,
    running: () => running,
    cpuSeconds: () => cpuSeconds(child.pid),
    rssMb: async () => {
      const reading = await readMemory(child.pid);
      return reading && reading.rssKb / 1024;
    },
    async kill() {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await child.exited;
      await closeProxies();
    },
    async stop() {
      await child.stop();
      await closeProxies();
    },
  };
}

import { ConfigError, type Config } from '../config/config.js';
import type { Database } from '../db/connection.js';
import type { FeedConfig } from '../config/feeds-file.js';
import type { IntakeClient } from '../intake/client.js';
import type { RetryInfo } from '../intake/retry-runner.js';
import type { Logger } from '../log/log.js';
import { composeWorker, type ComposeWorkerOptions } from '../sync/compose-worker.js';
import { workerSettingsFrom } from './worker-settings.js';
import { listFeedSources } from '../sync/version-migration/feed-sources.js';
import { planSources } from '../sync/version-migration/source-plan.js';
import { upstreamFailureReason } from '../sync/state/failure-reason.js';
import { createFeedLeases } from '../sync/leadership/lease.js';
import type { SyncWorker } from '../sync/leadership/leader-loop.js';
import { WorkerState } from '../sync/state/worker-state.js';
import { capHeapGrowthForFeeds } from './heap-growth.js';
import { feedOriginRefusal, type RunMode } from './demo-gate.js';
import { registerFeeds } from '../db/feed-registry.js';
import { intakeClientFor } from '../config/intake-client.js';

/** One configured feed of this process: its own client, state (health, metrics) and worker. */
export interface FeedWorker {
  feed: string;
  state: WorkerState;
  worker: SyncWorker;
}

export type Closers = Array<{ what: string; close: () => Promise<void> }>;

export interface FeedWorkersOptions {
  config: Config;
  /** decided by decideRunMode before the store opened */
  mode: RunMode;
  feeds: readonly FeedConfig[];
  database: Database;
  /** the lease's own session: LEASE_DATABASE_URL behind a pooler, else DATABASE_URL; undefined on PGlite */
  leaseUrl: string | undefined;
  log: Logger;
  clock: { now(): number };
  /** what the caller closes, in reverse order, once the workers have stopped */
  closers: Closers;
}

/**
 * One SyncWorker per feed, each with its own IntakeClient, checkpoint and state, all on ONE lock
 * session (createFeedLeases): a process costs one lock connection however many feeds it runs, and
 * replicas spread the feeds by their share. A feed's failure (401, upstream down, expired cursor)
 * stays in that feed's worker and state; the others go on.
 */
export async function composeFeedWorkers(options: FeedWorkersOptions): Promise<FeedWorker[]> {
  const { config, feeds, database, log, clock, closers } = options;
  // the feeds are configured from now on (the SQL API accepts them), and claimed for this kind of run:
  // the simulator never starts in a database holding an operator's feed, a real run never in the demo's
  const conflict = await registerFeeds(
    database.db,
    feeds.map((f) => f.name),
    options.mode === 'demo' ? 'simulator' : 'operator',
  );
  if (conflict) throw feedOriginRefusal(conflict, options.mode);
  // many feeds hold many pages at once: keep V8 from growing the heap to four times that (see heap-growth.ts)
  capHeapGrowthForFeeds(feeds.length);
  const leases = createFeedLeases(database, {
    feeds: feeds.map((f) => f.name),
    url: options.leaseUrl,
    idleTtlMs: config.LEASE_TTL_MS,
    log: log.child({ component: 'lease' }),
    timeouts: { lockTimeoutMs: config.DB_LOCK_TIMEOUT_MS, statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS },
    tls: {
      variable: options.leaseUrl !== undefined && options.leaseUrl === config.LEASE_DATABASE_URL ? 'LEASE_DATABASE_URL' : 'DATABASE_URL',
      caFile: config.DATABASE_CA_FILE,
    },
  });
  // closed after every worker stopped (closers run in reverse): a standby's session ends with it
  closers.push({ what: 'lease session', close: () => leases.close() });
  const workers: FeedWorker[] = [];
  for (const feed of feeds) {
    const state = new WorkerState(clock);
    const feedLog = feeds.length > 1 ? log.child({ feed: feed.name }) : log;
    const client = await connectUpstream(config, feed, database, feedLog, state, closers);
    const sources = feed.baseUrl ? await sourcesOf(config, feed, feed.baseUrl, client, database, feedLog, state) : undefined;
    const worker = composeWorker({
      database,
      databaseUrl: options.leaseUrl,
      lease: leases.lease(feed.name),
      client,
      outboxClient: client,
      ...(sources ? { outboxClientFor: sources.clientFor } : {}),
      ...(sources ? { sources: sources.option } : {}),
      settings: workerSettingsFrom(config, feed.name, feed.retain),
      state,
      log,
      clock,
    });
    workers.push({ feed: feed.name, state, worker });
  }
  return workers;
}

/**
 * The feed's recorded sources (API version migration): refuses at start (SourceMismatchError) when the
 * configured base URL is none of them; a client per source (same credentials: one account); the outbox
 * sends each row through the base URL its claim read from the feed's sources (outbox-store.ts).
 */
async function sourcesOf(
  config: Config,
  feed: FeedConfig,
  configuredBaseUrl: string,
  configuredClient: IntakeClient,
  database: Database,
  log: Logger,
  state: WorkerState,
): Promise<{ option: NonNullable<ComposeWorkerOptions['sources']>; clientFor(baseUrl: string): IntakeClient }> {
  planSources(feed.name, configuredBaseUrl, await listFeedSources(database.db, feed.name));
  const clients = new Map<string, IntakeClient>([[configuredBaseUrl, configuredClient]]);
  const onRetry = (info: RetryInfo) => state.upstreamRetry(upstreamFailureReason(info.error));
  const clientFor = (baseUrl: string): IntakeClient => {
    let client = clients.get(baseUrl);
    if (!client) {
      client = intakeClientFor(config, { baseUrl, apiKey: feed.apiKey ?? '', apiSecret: feed.apiSecret ?? '' }, { logger: log, onRetry });
      clients.set(baseUrl, client);
    }
    return client;
  };
  return { option: { configuredBaseUrl, clientFor }, clientFor };
}

/** The feed's operator, or (a single feed without a base URL) the built-in sandbox, seeded. */
async function connectUpstream(
  config: Config,
  feed: FeedConfig,
  database: Database,
  log: Logger,
  state: WorkerState,
  closers: Closers,
): Promise<IntakeClient> {
  const onRetry = (info: RetryInfo) => state.upstreamRetry(upstreamFailureReason(info.error));
  if (!feed.baseUrl) {
    // decideRunMode allowed the demo, and registerFeeds claimed the database for the simulator
    if (config.FEEDS_FILE) throw new ConfigError(`invalid environment:\n  feed ${feed.name}: base_url is required`);
    // the demo's simulator is loaded only in the demo: a production run never loads the sandbox modules
    const { startEmbeddedSandbox } = await import('./embedded-demo.js');
    const sandbox = await startEmbeddedSandbox(config, database, log.child({ component: 'sandbox' }), { onRetry });
    closers.push({ what: 'upstream', close: sandbox.close });
    return sandbox.client;
  }
  if (!feed.apiKey || !feed.apiSecret) {
    // config validation requires both with a base URL; a hand-built FeedConfig is still refused by name
    throw new ConfigError(`invalid environment:\n  feed ${feed.name}: api_key and api_secret are required with a base_url`);
  }
  return intakeClientFor(config, { baseUrl: feed.baseUrl, apiKey: feed.apiKey, apiSecret: feed.apiSecret }, { logger: log, onRetry });
}

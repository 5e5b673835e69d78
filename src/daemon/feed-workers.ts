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
import { createFeedLeases, type FeedLeases } from '../sync/leadership/lease.js';
import type { SyncWorker } from '../sync/leadership/leader-loop.js';
import { WorkerState } from '../sync/state/worker-state.js';
import { capHeapGrowthForFeeds } from './heap-growth.js';
import { feedOriginRefusal, type RunMode } from './demo-gate.js';
import { registerFeeds } from '../db/feed-registry.js';
import { intakeClientFor } from '../config/intake-client.js';
import { unretireFeeds } from '../db/feed-retirements.js';
import type { FeedPauseBoard } from '../sync/leadership/feed-pauses.js';
import type { OperatorBudgets } from './operator-budgets.js';
import type { SharedStatisticsPasses } from '../sync/statistics/shared-passes.js';

/** One configured feed of this process: its own client, state (health, metrics) and worker. */
export interface FeedWorker {
  feed: string;
  state: WorkerState;
  worker: SyncWorker;
}

export type Closers = Array<{ what: string; close: () => Promise<void> }>;

/** What composing a feed's worker needs, whichever feeds a reload adds later. */
export interface FeedWorkersContext {
  config: Config;
  /** decided by decideRunMode before the store opened */
  mode: RunMode;
  database: Database;
  /** the lease's own session: LEASE_DATABASE_URL behind a pooler, else DATABASE_URL; undefined on PGlite */
  leaseUrl: string | undefined;
  log: Logger;
  clock: { now(): number };
  /** the deployment's feed pauses (`feeds pause`), read once per lease check for every feed; none: never paused */
  pauses?: FeedPauseBoard;
  /** OPERATOR_MAX_RPS per operator host, shared by the process's feeds; none: no cap */
  budgets?: OperatorBudgets;
  /** the statistics passes of the process's feed leaders, one at a time (shared-passes.ts); none: one per leader */
  statisticsPasses?: SharedStatisticsPasses;
}

export interface FeedWorkersOptions extends FeedWorkersContext {
  feeds: readonly FeedConfig[];
  /** what the caller closes, in reverse order, once the workers have stopped */
  closers: Closers;
}

/**
 * Records `feeds` as configured and claims them for this kind of run: the simulator never starts in
 * a database holding an operator's feed, a real run never in the demo's. Also caps heap growth for
 * the number of feeds (see heap-growth.ts).
 */
export async function claimFeeds(context: FeedWorkersContext, feeds: readonly string[], total: number): Promise<void> {
  const conflict = await registerFeeds(context.database.db, feeds, context.mode === 'demo' ? 'simulator' : 'operator');
  if (conflict) throw feedOriginRefusal(conflict, context.mode);
  await unretireFeeds(context.database.db, feeds);
  // many feeds hold many pages at once: keep V8 from growing the heap to four times that (see heap-growth.ts)
  capHeapGrowthForFeeds(total);
}

/**
 * ONE lock session for every feed of the process (createFeedLeases): a process costs one lock
 * connection however many feeds it runs, and replicas spread the feeds by their share. Closed
 * after every worker stopped (closers run in reverse): a standby's session ends with it.
 */
export function openFeedLeases(context: FeedWorkersContext, feeds: readonly string[], closers: Closers): FeedLeases {
  const { config, database, log, leaseUrl } = context;
  const leases = createFeedLeases(database, {
    feeds,
    url: leaseUrl,
    idleTtlMs: config.LEASE_TTL_MS,
    log: log.child({ component: 'lease' }),
    timeouts: { lockTimeoutMs: config.DB_LOCK_TIMEOUT_MS, statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS },
    tls: {
      variable: leaseUrl !== undefined && leaseUrl === config.LEASE_DATABASE_URL ? 'LEASE_DATABASE_URL' : 'DATABASE_URL',
      caFile: config.DATABASE_CA_FILE,
    },
  });
  closers.push({ what: 'lease session', close: () => leases.close() });
  return leases;
}

/**
 * One feed's SyncWorker with its own IntakeClient, checkpoint and state. A feed's failure (401,
 * upstream down, expired cursor) stays in that feed's worker and state; the others go on.
 * `closers` gets what this feed alone opened (the demo's simulator).
 */
export async function composeFeedWorker(
  context: FeedWorkersContext,
  leases: FeedLeases,
  feed: FeedConfig,
  several: boolean,
  closers: Closers,
): Promise<FeedWorker> {
  const { config, database, log, clock } = context;
  const state = new WorkerState(clock);
  const feedLog = several ? log.child({ feed: feed.name }) : log;
  const client = await connectUpstream(config, feed, database, feedLog, state, closers, context.budgets);
  const sources = feed.baseUrl ? await sourcesOf(config, feed, feed.baseUrl, client, database, feedLog, state, context.budgets) : undefined;
  const worker = composeWorker({
    database,
    databaseUrl: context.leaseUrl,
    lease: leases.lease(feed.name),
    ...(context.pauses ? { pauseOf: pauseOfFeed(context.pauses, feed.name) } : {}),
    client,
    outboxClient: client,
    ...(sources ? { outboxClientFor: sources.clientFor } : {}),
    ...(sources ? { sources: sources.option } : {}),
    settings: workerSettingsFrom(config, feed.name, feed.retain),
    ...(context.statisticsPasses ? { statisticsPasses: context.statisticsPasses } : {}),
    state,
    log,
    clock,
  });
  return { feed: feed.name, state, worker };
}

function pauseOfFeed(pauses: FeedPauseBoard, feed: string) {
  return () => pauses.pauseOf(feed);
}

/** Every configured feed's worker, all on ONE lock session (see openFeedLeases). */
export async function composeFeedWorkers(options: FeedWorkersOptions): Promise<FeedWorker[]> {
  const { feeds, closers } = options;
  await claimFeeds(
    options,
    feeds.map((f) => f.name),
    feeds.length,
  );
  const leases = openFeedLeases(
    options,
    feeds.map((f) => f.name),
    closers,
  );
  const workers: FeedWorker[] = [];
  for (const feed of feeds) workers.push(await composeFeedWorker(options, leases, feed, feeds.length > 1, closers));
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
  budgets: OperatorBudgets | undefined,
): Promise<{ option: NonNullable<ComposeWorkerOptions['sources']>; clientFor(baseUrl: string): IntakeClient }> {
  planSources(feed.name, configuredBaseUrl, await listFeedSources(database.db, feed.name));
  const clients = new Map<string, IntakeClient>([[configuredBaseUrl, configuredClient]]);
  const onRetry = (info: RetryInfo) => state.upstreamRetry(upstreamFailureReason(info.error));
  const clientFor = (baseUrl: string): IntakeClient => {
    let client = clients.get(baseUrl);
    if (!client) {
      client = intakeClientFor(
        config,
        { baseUrl, apiKey: feed.apiKey ?? '', apiSecret: feed.apiSecret ?? '' },
        { logger: log, onRetry, requestBudget: budgets?.forFeed(baseUrl, feed.name) },
      );
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
  budgets: OperatorBudgets | undefined,
): Promise<IntakeClient> {
  const onRetry = (info: RetryInfo) => state.upstreamRetry(upstreamFailureReason(info.error));
  if (!feed.baseUrl) {
    // decideRunMode allowed the demo, and registerFeeds claimed the database for the simulator
    if (config.FEEDS_FILE) throw new ConfigError(`FEEDS_FILE: feed ${feed.name}: base_url is required`);
    // the demo's simulator is loaded only in the demo: a production run never loads the sandbox modules
    const { startEmbeddedSandbox } = await import('./embedded-demo.js');
    const sandbox = await startEmbeddedSandbox(config, database, log.child({ component: 'sandbox' }), { onRetry });
    closers.push({ what: 'upstream', close: sandbox.close });
    return sandbox.client;
  }
  if (!feed.apiKey || !feed.apiSecret) {
    // config validation requires both with a base URL; a hand-built FeedConfig is still refused by name
    throw new ConfigError(`feed ${feed.name}: api_key and api_secret are required with a base_url`);
  }
  return intakeClientFor(
    config,
    { baseUrl: feed.baseUrl, apiKey: feed.apiKey, apiSecret: feed.apiSecret },
    { logger: log, onRetry, requestBudget: budgets?.forFeed(feed.baseUrl, feed.name) },
  );
}

import { describeLeaseHolder } from './leadership/lease-holder.js';
import type { Database } from '../db/connection.js';
import type { IntakeClient } from '../intake/client.js';
import type { Logger } from '../log/log.js';
import { createFeedLease, type FeedLease } from './leadership/lease.js';
import { OutboxLoop } from './outbox/delivery-loop.js';
import { listFeedSources, loadCurrentPosition, loadDrainingPosition, retireSource } from './version-migration/feed-sources.js';
import type { Poller } from './poll/poller.js';
import type { PollLoop } from './poll/poll-loop.js';
import { createFeedPoller, type FeedPollerWiring } from './poll/feed-poller.js';
import { planSources, sourcesSignature, type PlannedSource } from './version-migration/source-plan.js';
import { SourcesPoller } from './version-migration/sources-poller.js';
import { sleepUnlessAborted, type LoopSleep } from '../lib/loop-sleep.js';
import { type Leadership, SyncWorker } from './leadership/leader-loop.js';
import type { WorkerState } from './state/worker-state.js';
import { RetentionCleaner, type RetentionSettings } from './retention/cleaner.js';
import { StatisticsKeeper, type StatisticsSettings } from './statistics/statistics-keeper.js';
import type { SharedStatisticsPasses } from './statistics/shared-passes.js';

export interface WorkerSettings {
  feed: string;
  pageLimit: number;
  pollIntervalMs: number;
  pollBackoffMaxMs: number;
  leaseRetryMs: number;
  leaseTtlMs: number;
  drainMaxFailures: number;
  /** how long a stop waits for the page in flight before leaving it to the server */
  stopWaitMs: number;
  /** a caught-up feed polls at this point of each interval (poll-phase.ts); undefined: the jittered interval */
  pollPhaseMs?: number;
  /** FEED_RETENTION_MS: a checkpoint idle this long stops the feed (suspected gap); undefined = no check */
  retentionMs?: number;
  /** the RETAIN_* settings of this feed: the leader runs the retention cleaner; undefined = no cleaner */
  retention?: RetentionSettings;
  /** the leader's ANALYZE task (statistics/); undefined = none (the server's autovacuum alone) */
  statistics?: StatisticsSettings;
}

export interface ComposeWorkerOptions {
  database: Database;
  /** the store's postgres:// URL (the lease opens its own connection); undefined on PGlite */
  databaseUrl: string | undefined;
  client: Pick<IntakeClient, 'listEvents'>;
  /** the client the leader delivers the outbox with; no outbox delivery when omitted */
  outboxClient?: Pick<IntakeClient, 'createPrescription' | 'cancelPrescription'>;
  /**
   * the outbox's client for a recorded source's base URL: each row goes through the URL its claim read
   * from the feed's sources (outbox-store.ts); without it every row goes through `outboxClient`
   */
  outboxClientFor?(baseUrl: string): Pick<IntakeClient, 'createPrescription' | 'cancelPrescription'>;
  settings: WorkerSettings;
  /** the feed's lease on the process's shared lock session (createFeedLeases); default: a lock session of its own */
  lease?: FeedLease;
  /** the feed's pause, shared by the process's feeds (FeedPauseBoard); default: never paused */
  pauseOf?: () => Promise<{ reason: string } | null>;
  state: WorkerState;
  log: Logger;
  clock?: { now(): number };
  sleep?: LoopSleep;
  random?: () => number;
  /** the process's statistics passes, shared by its feeds' leaders (shared-passes.ts); default: this worker's own */
  statisticsPasses?: SharedStatisticsPasses;
  /**
   * Reads the feed's recorded sources (API version migration, feed_sources) each term: without this the
   * worker reads `client` on the feed's checkpoint and nothing else (the embedded sandbox).
   */
  sources?: {
    /** the feed's configured base URL (FEEDS_FILE or INTAKE_API_BASE_URL): must be a recorded source, if any */
    configuredBaseUrl: string;
    clientFor(baseUrl: string): Pick<IntakeClient, 'listEvents'>;
  };
}

// rows of distinct external_ids in flight at once (their requests overlap; their short statements share the
// pool, while pages are applied on a connection of their own)
const OUTBOX_CONCURRENCY = 4;
const OUTBOX_BATCH_SIZE = 100;

/** Wires the real collaborators (client, page apply, checkpoint, lease) into a SyncWorker. */
export function composeWorker(options: ComposeWorkerOptions): SyncWorker {
  const { database, client, settings, state } = options;
  const clock = options.clock ?? { now: () => Date.now() };
  const sleep = options.sleep ?? sleepUnlessAborted;
  const random = options.random ?? Math.random;
  const log = options.log.child({ component: 'worker', feed: settings.feed });
  const lease =
    options.lease ?? createFeedLease(database, { feed: settings.feed, url: options.databaseUrl, idleTtlMs: settings.leaseTtlMs });
  const feed = settings.feed;
  const baseWiring: FeedPollerWiring = { db: database.db, client, settings, state, clock, sleep, random, log };
  const createSourcePoller = (wiring: FeedPollerWiring, source: PlannedSource, signature: string, changed: () => void): Poller => {
    // a changed fingerprint restarts the term's pollers; the page guard already keeps a stale one from writing
    const noticing = <T extends { signature: string }>(position: T): T => {
      if (position.signature !== signature) changed();
      return position;
    };
    let completedSeen = false;
    return createFeedPoller(wiring, {
      baseUrl: source.baseUrl,
      client: options.sources?.clientFor(source.baseUrl) ?? client,
      draining: source.draining,
      loadCheckpoint: source.draining
        ? async () => {
            const position = noticing(await loadDrainingPosition(database.db, feed, source.baseUrl));
            completedSeen ||= position.migrationCompleted;
            return position;
          }
        : async () => noticing(await loadCurrentPosition(database.db, feed)),
      afterCaughtUp: async (version) => {
        // seen complete at this pass's load or an earlier one: the pass that just ended read to the end after it
        // (the version compare-and-set below: and nothing was applied from it since)
        if (!completedSeen) return false;
        if (!(await retireSource(database.db, feed, source.baseUrl, version))) return false;
        log.info({ base_url: source.baseUrl, api_version: source.apiVersion }, 'source drained after its migration completed: retired');
        changed();
        return true;
      },
    });
  };
  const sources = options.sources;
  // each term's pollers ask that term's leader loop before acting on a checkpoint someone else moved
  const createLoop = (leadership: Leadership): PollLoop => {
    const wiring: FeedPollerWiring = { ...baseWiring, leadership };
    return sources
      ? new SourcesPoller({
          loadSources: async () => {
            const recorded = await listFeedSources(database.db, feed);
            const planned = planSources(feed, sources.configuredBaseUrl, recorded);
            state.sourcesLoaded(recorded.map((r) => ({ apiVersion: r.apiVersion, state: r.state })));
            return { sources: planned, signature: sourcesSignature(recorded) };
          },
          createPoller: (source, signature, changed) => createSourcePoller(wiring, source, signature, changed),
          sleep,
          retryMs: settings.leaseRetryMs,
          log,
        })
      : createFeedPoller(wiring);
  };
  const outboxClient = options.outboxClient;
  const retention = settings.retention;
  // the cleaner runs on the feed's leader only, one per term, like the outbox delivery
  const createCleaner = () =>
    retention
      ? [
          new RetentionCleaner({
            db: database.db,
            feed,
            settings: retention,
            clock,
            sleep,
            log: log.child({ component: 'retention' }),
            onPurged: (cls, rows) => state.retentionPurged(cls, rows),
          }),
        ]
      : [];
  const statistics = settings.statistics;
  // ANALYZE of the tables a drain or an import changed, on the leader only; the process's leaders share one pass at a time
  const createStatisticsKeeper = () =>
    statistics
      ? [
          new StatisticsKeeper({
            db: database.db,
            settings: statistics,
            clock,
            sleep,
            log: log.child({ component: 'statistics' }),
            onAnalyzed: (analyzed) => state.tableAnalyzed(analyzed.table, analyzed.rowsChanged, analyzed.durationMs),
            shared: options.statisticsPasses,
          }),
        ]
      : [];
  const createLeaderTasks = () => [
    ...createCleaner(),
    ...createStatisticsKeeper(),
    ...(outboxClient
      ? [
          new OutboxLoop({
            delivery: {
              db: database.db,
              feed: settings.feed,
              client: outboxClient,
              ...(sources ? { configuredBaseUrl: sources.configuredBaseUrl } : {}),
              ...(options.outboxClientFor ? { clientFor: options.outboxClientFor } : {}),
              // a row's retries follow the poll cadence: the first within about an interval, capped like the poller's backoff
              backoff: { baseMs: settings.pollIntervalMs, capMs: settings.pollBackoffMaxMs },
              random,
              log: log.child({ component: 'outbox' }),
            },
            sleep,
            // idle, it looks for due rows on the lease-check cadence when polls are more frequent: a caught-up
            // daemon polling every second would otherwise add a statement to every poll (issue 12's idle budget)
            idleMs: Math.max(settings.pollIntervalMs, settings.leaseRetryMs),
            maxBackoffMs: settings.pollBackoffMaxMs,
            concurrency: OUTBOX_CONCURRENCY,
            batchSize: OUTBOX_BATCH_SIZE,
            log: log.child({ component: 'outbox' }),
          }),
        ]
      : []),
  ];
  return new SyncWorker({
    lease,
    createPoller: createLoop,
    createLeaderTasks,
    state,
    sleep,
    leaseRetryMs: settings.leaseRetryMs,
    stopWaitMs: settings.stopWaitMs,
    log,
    feed: settings.feed,
    describeLeaseHolder: () => describeLeaseHolder(database, settings.feed),
    ...(options.pauseOf ? { pauseOf: options.pauseOf } : {}),
  });
}

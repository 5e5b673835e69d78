import { loadConfig, type Config } from '../config/config.js';
import type { Database } from '../db/connection.js';
import { resolveFeeds } from '../config/feeds-file.js';
import { overdueSource } from '../ops/metrics-overdue.js';
import { writeFeedDeadlines } from '../sync/overdue/feed-deadlines-store.js';
import { configStageDeadlines, feedStageDeadlines } from '../sync/overdue/overdue-stages.js';
import { createLogger, type Logger } from '../log/log.js';
import { databaseProbe } from '../ops/database-probe.js';
import { startHealthServer } from '../ops/health-server.js';
import { createFeedsMetrics } from '../ops/metrics.js';
import { retentionSource, tableSizeSource } from '../ops/retention-source.js';
import { outboxSource } from '../ops/outbox-source.js';
import { quarantineSource } from '../ops/quarantine-source.js';
import { defaultMaxPollAgeMs } from '../ops/readiness.js';
import { decideRunMode } from './demo-gate.js';
import { composeFeedWorkers, type Closers, type FeedWorker } from './feed-workers.js';
import { startProgressReporter } from './progress.js';
import { summaryJson, summaryText } from './run-summary.js';
import { shutdownOnSignal } from './signals.js';
import { databaseTlsWarnings } from './database-tls.js';
import { openStore } from './store-context.js';
import { readSchemaLevel } from '../db/schema-level.js';
import { attachActivityLog } from '../sync/activity/activity-log.js';
import { attachFeedStopRecord } from '../sync/activity/feed-stop-record.js';
import { latestCheckpointMove } from '../sync/feed-admin/checkpoint-mover.js';
import { VERSION } from '../version.js';
import { healthListenError } from './health-port-error.js';
import { startLineFields } from './start-line.js';
/** What `run` was asked for, its flags already checked by the command. */
export interface RunWorkerOptions {
  once: boolean;
  json: boolean;
  demo: boolean;
  /** `--wait-for-lease` in ms (`run --once` only) */
  leaseWaitMs: number;
}

const clock = { now: () => Date.now() };

/**
 * Runs the sync worker of every feed until stopped (or, with `once`, until each is caught up) and
 * returns the exit code. Opens the store (migrating on start), the health endpoint, the progress
 * and activity logs, and closes them in reverse order whatever happens.
 */
export async function runWorker(options: RunWorkerOptions): Promise<number> {
  const { leaseWaitMs } = options;
  const config = loadConfig();
  // decided before anything opens: a deployment missing its base URL exits 2 and writes nothing
  const mode = decideRunMode(config, { demo: options.demo });
  // read before anything opens: a bad FEEDS_FILE exits 2 naming the file and field
  const feeds = resolveFeeds(config);
  const log = createLogger({ level: config.LOG_LEVEL, pretty: Boolean(process.stderr.isTTY) });
  // closed in reverse order of opening, whatever happens
  const closers: Closers = [];
  let workers: FeedWorker[] = [];
  let stopRequested = false;
  shutdownOnSignal({
    graceMs: config.SHUTDOWN_GRACE_MS,
    log,
    shutdown: async () => {
      stopRequested = true;
      await Promise.all(workers.map(({ worker }) => worker.stop()));
    },
  });
  // the operator said so in so many words (sslmode=require or disable), but it is worth a line every start
  for (const warning of databaseTlsWarnings(config)) log.warn({ component: 'database' }, warning);
  try {
    // migrations are applied here, serialised across processes
    const { database, sessions } = await openStore(config, { lease: true, migrate: config.MIGRATE_ON_START });
    closers.push({ what: 'database', close: () => database.close() });
    const level = await readSchemaLevel(database);
    log.info(
      startLineFields({ version: VERSION, nodeVersion: process.versions.node, config, feeds, sessions, level }),
      `intake-sync ${VERSION} starting`,
    );
    // overdue_prescriptions reads each feed's stage deadlines from the database
    await writeFeedDeadlines(
      database.db,
      feeds.map((f) => ({ feed: f.name, deadlines: feedStageDeadlines(configStageDeadlines(config), f.overdue) })),
    );
    workers = await composeFeedWorkers({ config, mode, feeds, database, leaseUrl: sessions?.sessionUrl, log, clock, closers });
    for (const { feed, state } of workers) {
      const stopProgress = startProgressReporter({
        state,
        clock,
        log: log.child({ component: 'progress', ...(workers.length > 1 ? { feed } : {}) }),
        // one live line per terminal: several feeds log their progress instead
        tty: process.stderr.isTTY && workers.length === 1 ? process.stderr : undefined,
        intervalMs: config.PROGRESS_LOG_INTERVAL_MS,
      });
      closers.push({ what: 'progress', close: async () => stopProgress() });
      const stopActivity = attachActivityLog({
        state,
        clock,
        log: log.child({ component: 'activity', feed }),
        intervalMs: config.PROGRESS_LOG_INTERVAL_MS,
        whoMoved: () => latestCheckpointMove(database.db, feed),
      });
      closers.push({ what: 'activity log', close: async () => stopActivity() });
      // why the feed stopped, for the console (feed_overview), which cannot ask this process
      const detachStopRecord = attachFeedStopRecord({
        state,
        db: database.db,
        names: database.names,
        feed,
        log: log.child({ component: 'activity', feed }),
      });
      closers.push({ what: 'feed stop record', close: detachStopRecord });
    }
    if (stopRequested) return 0;
    if (options.once) return await drainOnce(workers, options.json, leaseWaitMs);
    await startHealth(config, database, workers, log, closers);
    // one feed's worker ending (a bug) must not end the others: each is awaited to its own end
    const ended = await Promise.allSettled(workers.map(({ worker }) => worker.run()));
    const failed = ended.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return 0;
  } finally {
    for (const { what, close } of closers.reverse()) {
      await close().catch((error: unknown) =>
        log.warn({ what, error: error instanceof Error ? error.name : typeof error }, 'close failed'),
      );
    }
    log.info('stopped');
  }
}

/** `run --once`: drains every feed side by side; prints each summary; fails (after printing the rest) if any feed did. */
async function drainOnce(workers: readonly FeedWorker[], json: boolean, leaseWaitMs: number): Promise<number> {
  const results = await Promise.allSettled(workers.map(({ worker }) => worker.drain({ leaseWaitMs })));
  const several = workers.length > 1;
  results.forEach((result, index) => {
    const feed = workers[index]?.feed ?? '';
    if (result.status !== 'fulfilled' || !result.value) return;
    const summary = result.value;
    if (json) process.stdout.write(`${JSON.stringify(several ? { feed, ...summaryJson(summary) } : summaryJson(summary))}\n`);
    else process.stdout.write(`${several ? `feed ${feed}\n` : ''}${summaryText(summary)}\n`);
  });
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return 0;
}

async function startHealth(
  config: Config,
  database: Database,
  workers: readonly FeedWorker[],
  log: Logger,
  closers: Closers,
): Promise<void> {
  const maxPollAgeMs = defaultMaxPollAgeMs(config.POLL_INTERVAL_MS, config.READY_MAX_POLL_AGE_MS);
  const metrics = createFeedsMetrics(
    workers.map(({ feed, state }) => ({
      feed,
      state,
      quarantine: quarantineSource(database, feed),
      outbox: outboxSource(database, feed),
      retention: retentionSource(database, feed),
    })),
    clock,
    {
      pollIntervalMs: config.POLL_INTERVAL_MS,
      readyMaxPollAgeMs: maxPollAgeMs,
      retentionIntervalMs: config.RETENTION_INTERVAL,
      tableSizes: tableSizeSource(database),
      overdue: overdueSource(database),
    },
  );
  closers.push({ what: 'metrics', close: async () => metrics.close() });
  const server = await startHealthServer({
    host: config.HEALTH_HOST,
    port: config.HEALTH_PORT,
    feeds: workers,
    metrics,
    probeDatabase: databaseProbe(database),
    thresholds: {
      maxPollAgeMs,
      maxFailures: config.READY_MAX_FAILURES,
    },
    clock,
    log: log.child({ component: 'health' }),
  }).catch((error: unknown) => {
    // EADDRINUSE and friends name the setting to change, not just the socket call
    throw healthListenError(error, config.HEALTH_HOST, config.HEALTH_PORT);
  });
  closers.push({ what: 'health endpoint', close: () => server.close() });
}

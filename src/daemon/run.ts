import { processTelemetry } from '../telemetry/start.js';
import type { PrometheusMetric } from '../telemetry/prometheus-bridge.js';
import { loadConfig, type Config } from '../config/config.js';
import type { Database } from '../db/connection.js';
import type { SessionPlan } from '../db/session-plan.js';
import { resolveFeeds } from '../config/feeds-file.js';
import { overdueSource } from '../ops/metrics-overdue.js';
import { writeFeedDeadlines } from '../store-api/overdue/feed-deadlines.js';
import { configStageDeadlines, feedStageDeadlines } from '../config/overdue-deadlines.js';
import { createLogger, type Logger } from '../log/log.js';
import { databaseProbe } from '../ops/database-probe.js';
import { startHealthServer } from '../ops/health-server.js';
import { retentionSource, tableSizeSource } from '../ops/retention-source.js';
import { outboxSource } from '../ops/outbox-source.js';
import { quarantineSource } from '../ops/quarantine-source.js';
import { defaultMaxPollAgeMs } from '../ops/readiness.js';
import { decideRunMode } from './demo-gate.js';
import { claimFeeds, openFeedLeases, type Closers, type FeedWorker } from './feed-workers.js';
import { summaryJson, summaryText } from './run-summary.js';
import { reloadOnHangup, shutdownOnSignal } from './signals.js';
import { databaseTlsWarnings } from './database-tls.js';
import { readSchemaLevel } from '../db/schema-level.js';
import { SecretFileReader } from '../config/secret-file.js';
import type { FeedConfig } from '../config/feeds-file.js';
import { FeedFleet } from './feeds-reload/feed-fleet.js';
import { LiveMetrics } from './feeds-reload/live-metrics.js';
import { createReloadMetrics } from './feeds-reload/reload-metrics.js';
import type { Registry } from 'prom-client';
import { FeedPauseBoard, readFeedPauses } from '../sync/leadership/feed-pauses.js';
import { registerPauseMetric } from './pause-metrics.js';
import { OperatorBudgets } from './operator-budgets.js';
import { SharedStatisticsPasses } from '../sync/statistics/shared-passes.js';
import { STATISTICS_DEFAULTS } from '../sync/statistics/statistics-keeper.js';
import { startFeedsReload } from './feeds-reload/start-reload.js';
import { VERSION } from '../version.js';
import { healthListenError } from './health-port-error.js';
import { startLineFields } from './start-line.js';
import { envFileRead } from '../config/env-file.js';
/** What `run` was asked for, its flags already checked by the command. */
export interface RunWorkerOptions {
  once: boolean;
  json: boolean;
  demo: boolean;
  /** `--wait-for-lease` in ms (`run --once` only) */
  leaseWaitMs: number;
  /**
   * Opens the store the configuration points at, migrating when asked and laying out the lease's
   * session: the CLI's store opener (src/cli/context/store-context.ts), which every command shares.
   */
  openStore: (
    config: Config,
    options: { lease: true; migrate: boolean },
  ) => Promise<{ database: Database; sessions: SessionPlan | undefined }>;
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
  const secrets = new SecretFileReader();
  const feeds = resolveFeeds(config, process.env, secrets);
  const log = createLogger({ level: config.LOG_LEVEL, pretty: Boolean(process.stderr.isTTY) });
  for (const warning of secrets.warnings) log.warn({ component: 'config' }, warning);
  // closed in reverse order of opening, whatever happens
  const closers: Closers = [];
  let fleet: FeedFleet | undefined;
  let stopRequested = false;
  shutdownOnSignal({
    graceMs: config.SHUTDOWN_GRACE_MS,
    log,
    shutdown: async () => {
      stopRequested = true;
      await fleet?.stopAll();
    },
  });
  // SIGHUP re-reads FEEDS_FILE once the feeds run; before that, or without the file, it is only logged
  // (never the default action, which ends the process: `systemctl reload` sends it)
  let onHangup = () =>
    log.info(
      { component: 'config' },
      config.FEEDS_FILE
        ? 'SIGHUP before the feeds started: ignored'
        : 'SIGHUP: nothing to re-read without FEEDS_FILE (the variables change with a restart)',
    );
  const removeHangup = reloadOnHangup(() => onHangup());
  closers.push({ what: 'SIGHUP handler', close: async () => removeHangup() });
  // the operator said so in so many words (sslmode=require or disable), but it is worth a line every start
  for (const warning of databaseTlsWarnings(config)) log.warn({ component: 'database' }, warning);
  try {
    // migrations are applied here, serialised across processes
    const { database, sessions } = await options.openStore(config, { lease: true, migrate: config.MIGRATE_ON_START });
    closers.push({ what: 'database', close: () => database.close() });
    const level = await readSchemaLevel(database);
    log.info(
      startLineFields({ version: VERSION, nodeVersion: process.versions.node, config, feeds, sessions, level, envFile: envFileRead() }),
      `intake-sync ${VERSION} starting${envFileRead() ? ' (settings from .env too; the environment wins)' : ''}`,
    );
    await writeDeadlines(config, database, feeds);
    // one read of the pauses per half lease check at most, for all feeds: honoured within a lease check
    const pauses = new FeedPauseBoard(() => readFeedPauses(database.db), Math.min(500, config.LEASE_RETRY_MS / 2), clock.now);
    // OPERATOR_MAX_RPS: one budget per operator host, shared by every feed of this process
    const budgets = new OperatorBudgets(config.OPERATOR_MAX_RPS, clock);
    // the schema's tables are analyzed by one pass of the process at a time, whichever feed's leader runs it
    const statisticsPasses = new SharedStatisticsPasses(STATISTICS_DEFAULTS.intervalMs, clock);
    const context = { config, mode, database, leaseUrl: sessions?.sessionUrl, log, clock, pauses, budgets, statisticsPasses };
    const names = feeds.map((f) => f.name);
    await claimFeeds(context, names, feeds.length);
    const leases = openFeedLeases(context, names, closers);
    // FEEDS_FILE may grow from one feed to several while running: its logs name the feed from the start
    const running = new FeedFleet(context, leases, Boolean(config.FEEDS_FILE) || feeds.length > 1);
    fleet = running;
    // before the lease session closes (closers run in reverse): every worker stopped, each feed's observers closed
    closers.push({ what: 'feeds', close: () => running.stopAll() });
    for (const feed of feeds) await running.add(feed);
    if (stopRequested) return 0;
    if (options.once) return await drainOnce(running.entries, options.json, leaseWaitMs);
    const reloadMetrics = createReloadMetrics(clock.now());
    const metrics = await startHealth(config, database, running.entries, log, closers, (registry) => {
      reloadMetrics.register(registry);
      registerPauseMetric(registry, pauses, () => running.entries.map((e) => e.feed));
    });
    // OTEL_METRICS_EXPORTER=otlp: the same series pushed over OTLP (the current registry at each export)
    processTelemetry().exportMetrics(async () => (await metrics.registry.getMetricsAsJSON()) as unknown as PrometheusMetric[]);
    running.startAll();
    if (config.FEEDS_FILE)
      onHangup = startFeedsReload({
        config,
        feedsFile: config.FEEDS_FILE,
        secretFiles: [...secrets.paths],
        initial: feeds,
        fleet: running,
        metrics: reloadMetrics,
        log: log.child({ component: 'config' }),
        clock,
        closers,
        onApplied: async (next) => {
          await writeDeadlines(config, database, next);
          metrics.rebuild(metricsSources(database, running.entries));
        },
      });
    // one feed's worker ending (a bug) must not end the others: the fleet ends once every worker has
    await running.untilEnded();
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

/** overdue_prescriptions reads each feed's stage deadlines from the database. */
async function writeDeadlines(config: Config, database: Database, feeds: readonly FeedConfig[]): Promise<void> {
  await writeFeedDeadlines(
    database.db,
    feeds.map((f) => ({ feed: f.name, deadlines: feedStageDeadlines(configStageDeadlines(config), f.overdue) })),
  );
}

function metricsSources(database: Database, workers: readonly FeedWorker[]) {
  return workers.map(({ feed, state }) => ({
    feed,
    state,
    quarantine: quarantineSource(database, feed),
    outbox: outboxSource(database, feed),
    retention: retentionSource(database, feed),
  }));
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
  processMetrics: (registry: Registry) => void,
): Promise<LiveMetrics> {
  const maxPollAgeMs = defaultMaxPollAgeMs(config.POLL_INTERVAL_MS, config.READY_MAX_POLL_AGE_MS);
  const metrics = new LiveMetrics(
    metricsSources(database, workers),
    clock,
    {
      pollIntervalMs: config.POLL_INTERVAL_MS,
      readyMaxPollAgeMs: maxPollAgeMs,
      retentionIntervalMs: config.RETENTION_INTERVAL,
      tableSizes: tableSizeSource(database),
      overdue: overdueSource(database),
    },
    processMetrics,
  );
  closers.push({ what: 'metrics', close: async () => metrics.close() });
  const server = await startHealthServer({
    host: config.HEALTH_HOST,
    port: config.HEALTH_PORT,
    // the fleet's entries, changed in place by a reload: each request reads the feeds of that moment
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
  return metrics;
}

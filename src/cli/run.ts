import type { Command } from 'commander';
import { ConfigError, loadConfig, type Config } from '../config.js';
import type { Database } from '../db/connection.js';
import { resolveFeeds } from '../feeds-file.js';
import { createLogger, type Logger } from '../log.js';
import { databaseProbe } from '../ops/database-probe.js';
import { startHealthServer } from '../ops/health-server.js';
import { createFeedsMetrics } from '../ops/metrics.js';
import { outboxSource } from '../ops/outbox-source.js';
import { quarantineSource } from '../ops/quarantine-source.js';
import { defaultMaxPollAgeMs } from '../ops/readiness.js';
import { composeFeedWorkers, type Closers, type FeedWorker } from './feed-workers.js';
import { startProgressReporter } from './progress.js';
import { summaryJson, summaryText } from './run-summary.js';
import { shutdownOnSignal } from './signals.js';
import { databaseTlsWarnings } from './database-tls.js';
import { DEFAULT_LEASE_WAIT_S, leaseWaitMsFrom } from './lease-wait.js';
import { openStore } from './store-context.js';
interface RunOptions {
  once?: boolean;
  json?: boolean;
  waitForLease?: string;
}

/** Registers `intake-sync run [--once [--json] [--wait-for-lease SECONDS]]`. */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('run the sync worker: poll the event feed and apply it to the database (migrates on start)')
    .option('--once', 'drain the feed until it is caught up, print a summary and exit (cron, tests, benchmarks)')
    .option('--json', 'with --once: print the summary as one JSON object')
    .option(
      '--wait-for-lease <seconds>',
      `with --once: give up (exit 1, naming the holder) when another process still holds a feed's lease after this long (default ${DEFAULT_LEASE_WAIT_S})`,
    )
    .action(async (options: RunOptions) => {
      process.exitCode = await runWorker(options);
    });
}

const clock = { now: () => Date.now() };

/** Refuses the embedded fallbacks where they would be a deployment mistake (the Docker image sets the switch). */
export function requireExplicitConfig(config: Config): void {
  if (config.INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG !== '1') return;
  // with FEEDS_FILE every feed names its base_url (the file's schema requires it)
  const required = config.FEEDS_FILE ? (['DATABASE_URL'] as const) : (['INTAKE_API_BASE_URL', 'DATABASE_URL'] as const);
  const missing = required.filter((key) => !config[key]);
  if (missing.length === 0) return;
  const lines = missing.map(
    (key) => `  ${key}: is required here (INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG=1 disables the embedded sandbox and PGlite)`,
  );
  throw new ConfigError(`invalid environment:\n${lines.join('\n')}`);
}

async function runWorker(options: RunOptions): Promise<number> {
  // refused before anything opens: bad input writes nothing
  const leaseWaitMs = leaseWaitMsFrom(options.waitForLease, options.once === true);
  const config = loadConfig();
  requireExplicitConfig(config);
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
    const { database, sessions } = await openStore(config, { lease: true });
    closers.push({ what: 'database', close: () => database.close() });
    workers = await composeFeedWorkers({ config, feeds, database, leaseUrl: sessions?.sessionUrl, log, clock, closers });
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
    }
    if (stopRequested) return 0;
    if (options.once) return await drainOnce(workers, options.json === true, leaseWaitMs);
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
    workers.map(({ feed, state }) => ({ feed, state, quarantine: quarantineSource(database, feed), outbox: outboxSource(database, feed) })),
    clock,
    { pollIntervalMs: config.POLL_INTERVAL_MS, readyMaxPollAgeMs: maxPollAgeMs },
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
  });
  closers.push({ what: 'health endpoint', close: () => server.close() });
}

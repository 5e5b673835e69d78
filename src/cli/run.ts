import type { Command } from 'commander';
import { ConfigError, loadConfig, type Config } from '../config.js';
import type { Database } from '../db/connection.js';
import { IntakeClient } from '../intake/client.js';
import type { RetryInfo } from '../intake/retry-runner.js';
import { createLogger, type Logger } from '../log.js';
import { databaseProbe } from '../ops/database-probe.js';
import { startHealthServer } from '../ops/health-server.js';
import { createSyncMetrics } from '../ops/metrics.js';
import { outboxSource } from '../ops/outbox-source.js';
import { quarantineSource } from '../ops/quarantine-source.js';
import { defaultMaxPollAgeMs } from '../ops/readiness.js';
import { composeWorker, workerSettingsFrom } from '../sync/compose-worker.js';
import { upstreamFailureReason } from '../sync/failure-reason.js';
import type { SyncWorker } from '../sync/worker.js';
import { WorkerState } from '../sync/worker-state.js';
import { requireRemoteConfig } from './client-context.js';
import { startEmbeddedSandbox } from './embedded-demo.js';
import { startProgressReporter } from './progress.js';
import { summaryJson, summaryText } from './run-summary.js';
import { shutdownOnSignal } from './signals.js';
import { openStore } from './store-context.js';

interface RunOptions {
  once?: boolean;
  json?: boolean;
}

/** Registers `intake-sync run [--once] [--json]`. */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('run the sync worker: poll the event feed and apply it to the database (migrates on start)')
    .option('--once', 'drain the feed until it is caught up, print a summary and exit (cron, tests, benchmarks)')
    .option('--json', 'with --once: print the summary as one JSON object')
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
  const lines = missing.map((key) => `  ${key}: is required here (INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG=1 disables the embedded sandbox and PGlite)`);
  throw new ConfigError(`invalid environment:\n${lines.join('\n')}`);
}

async function runWorker(options: RunOptions): Promise<number> {
  const config = loadConfig();
  requireExplicitConfig(config);
  const log = createLogger({ level: config.LOG_LEVEL, pretty: Boolean(process.stderr.isTTY) });
  const state = new WorkerState(clock);
  // closed in reverse order of opening, whatever happens
  const closers: Array<{ what: string; close: () => Promise<void> }> = [];
  let worker: SyncWorker | undefined;
  let stopRequested = false;
  shutdownOnSignal({
    graceMs: config.SHUTDOWN_GRACE_MS,
    log,
    shutdown: async () => {
      stopRequested = true;
      await worker?.stop();
    },
  });
  try {
    // migrations are applied here, serialised across processes
    const { database, sessions } = await openStore(config, { lease: true });
    closers.push({ what: 'database', close: () => database.close() });
    const upstream = await connectUpstream(config, database, log, state);
    closers.push({ what: 'upstream', close: upstream.close });
    worker = composeWorker({
      database,
      // the lease's own session: LEASE_DATABASE_URL behind a pooler, else DATABASE_URL
      databaseUrl: sessions?.sessionUrl,
      client: upstream.client,
      outboxClient: upstream.client,
      settings: workerSettingsFrom(config),
      state,
      log,
      clock,
    });
    const stopProgress = startProgressReporter({
      state,
      clock,
      log: log.child({ component: 'progress' }),
      tty: process.stderr.isTTY ? process.stderr : undefined,
      intervalMs: config.PROGRESS_LOG_INTERVAL_MS,
    });
    closers.push({ what: 'progress', close: async () => stopProgress() });
    if (stopRequested) return 0;
    if (options.once) return await drainOnce(worker, options.json === true);
    await startHealth(config, database, state, log, closers);
    await worker.run();
    return 0;
  } finally {
    for (const { what, close } of closers.reverse()) {
      await close().catch((error: unknown) => log.warn({ what, error: error instanceof Error ? error.name : typeof error }, 'close failed'));
    }
    log.info('stopped');
  }
}

async function drainOnce(worker: SyncWorker, json: boolean): Promise<number> {
  const summary = await worker.drain();
  if (!summary) return 0;
  process.stdout.write(json ? `${JSON.stringify(summaryJson(summary))}\n` : `${summaryText(summary)}\n`);
  return 0;
}

async function startHealth(
  config: Config,
  database: Database,
  state: WorkerState,
  log: Logger,
  closers: Array<{ what: string; close: () => Promise<void> }>,
): Promise<void> {
  const maxPollAgeMs = defaultMaxPollAgeMs(config.POLL_INTERVAL_MS, config.READY_MAX_POLL_AGE_MS);
  const metrics = createSyncMetrics(state, clock, {
    feed: config.FEED_NAME,
    pollIntervalMs: config.POLL_INTERVAL_MS,
    readyMaxPollAgeMs: maxPollAgeMs,
    quarantine: quarantineSource(database, config.FEED_NAME),
    outbox: outboxSource(database),
  });
  closers.push({ what: 'metrics', close: async () => metrics.close() });
  const server = await startHealthServer({
    host: config.HEALTH_HOST,
    port: config.HEALTH_PORT,
    state,
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

/** The configured operator, or (no INTAKE_API_BASE_URL) the built-in sandbox, seeded. */
async function connectUpstream(
  config: Config,
  database: Database,
  log: Logger,
  state: WorkerState,
): Promise<{ client: IntakeClient; close: () => Promise<void> }> {
  const onRetry = (info: RetryInfo) => state.upstreamRetry(upstreamFailureReason(info.error));
  if (!config.INTAKE_API_BASE_URL) {
    const sandbox = await startEmbeddedSandbox(config, database, log.child({ component: 'sandbox' }), { onRetry });
    return { client: sandbox.client, close: sandbox.close };
  }
  const remote = requireRemoteConfig(config);
  const client = new IntakeClient({ ...remote, logger: log, onRetry });
  return { client, close: async () => {} };
}

// A bench child: `run --once` exactly as the daemon wires it (composeWorker: IntakeClient, Poller with
// prefetch and validation overlapped, applyPage, checkpoint, lease), plus two observers: a wrapper
// timing each GET /events, and a WorkerState listener collecting each page's apply timings.
// Prints one JSON line with every page's timings and exits.
import { loadConfig, loadTelemetryConfig } from '../src/config/config.js';
import { startTelemetry } from '../src/telemetry/start.js';
import { openDatabase } from '../src/db/connection.js';
import { IntakeClient } from '../src/intake/client.js';
import { createLogger } from '../src/log/log.js';
import { workerSettingsFrom } from '../src/daemon/worker-settings.js';
import { composeWorker } from '../src/sync/compose-worker.js';
import { WorkerState } from '../src/sync/state/worker-state.js';
import type { PageTiming } from './page-timings.js';
import { readMemory } from './rss.js';

const config = loadConfig();
// as the CLI does: OTEL_* set, the drain is traced (docs/performance.md, "Tracing cost"); unset, nothing loads
const telemetry = await startTelemetry(loadTelemetryConfig());
const log = createLogger({ level: config.LOG_LEVEL });
const database = await openDatabase({ url: config.DATABASE_URL, idleInTransactionTimeoutMs: config.LEASE_TTL_MS });
const client = new IntakeClient({
  baseUrl: config.INTAKE_API_BASE_URL ?? '',
  apiKey: config.INTAKE_API_KEY ?? '',
  apiSecret: config.INTAKE_API_SECRET ?? '',
  timeoutMs: config.HTTP_TIMEOUT_MS,
  logger: log,
});
const clock = { now: () => Date.now() };
const state = new WorkerState(clock);
const pages: PageTiming[] = [];
// fetches complete in page order and each is applied before the one after it: a FIFO pairs them
const fetched: Array<{ startedAt: number; endedAt: number }> = [];
let lastCommitAt = 0;

const timedClient: Pick<IntakeClient, 'listEvents'> = {
  async listEvents(request, options) {
    const startedAt = performance.now();
    const page = await client.listEvents(request, options);
    fetched.push({ startedAt, endedAt: performance.now() });
    return page;
  },
};
state.subscribe({
  pageApplied(page) {
    const committedAt = performance.now();
    const fetch = fetched.shift() ?? { startedAt: committedAt, endedAt: committedAt };
    const timings = page.timingsMs ?? { prepare: 0, validate: 0, write: 0, commit: 0 };
    const apply = timings.validate + timings.write + timings.commit;
    pages.push({
      events: page.received,
      fetch: fetch.endedAt - fetch.startedAt,
      // the part of the fetch the loop waited for once the previous page had committed
      fetch_wait: Math.max(0, fetch.endedAt - Math.max(fetch.startedAt, lastCommitAt)),
      ...timings,
      apply,
    });
    lastCommitAt = committedAt;
  },
});

// BENCH_STATISTICS_MS (bench/statistics-cost.ts): `off` runs no statistics task; `default` (or unset) the
// daemon's; a number runs it from the drain's start at that interval (its worst case on a drain)
const statisticsOverride = process.env.BENCH_STATISTICS_MS;
const settings = workerSettingsFrom(config);
if (statisticsOverride === 'off') delete settings.statistics;
else if (statisticsOverride !== undefined && statisticsOverride !== 'default') {
  const intervalMs = Number(statisticsOverride);
  if (!Number.isInteger(intervalMs) || intervalMs < 100) throw new Error('BENCH_STATISTICS_MS: must be off or a whole number of ms >= 100');
  settings.statistics = { intervalMs, startDelayMs: 0 };
}

const worker = composeWorker({
  database,
  databaseUrl: config.DATABASE_URL,
  client: timedClient,
  settings,
  state,
  log,
  clock,
});

try {
  const summary = await worker.drain();
  const memory = await readMemory(process.pid);
  process.stdout.write(`${JSON.stringify({ summary, peak_rss_kb: memory?.hwmKb ?? process.resourceUsage().maxRSS, pages })}\n`);
} finally {
  await database.close();
  await telemetry.shutdown();
}

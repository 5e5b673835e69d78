// A bench child: `run --once` semantics with the production pieces (IntakeClient, Poller, applyPage,
// loadCheckpoint, WorkerState, delay policy), wired exactly as composeWorker() wires the Poller.
// Left out: the feed lease (checked off the page path) and migrate-on-start (the bench migrated).
// Added: timers around fetchPage and applyPage, because composeWorker does not surface applyPage's
// timingsMs. Prints one JSON line with every page's timings and exits.
import { openDatabase } from '../src/db/connection.js';
import { IntakeClient } from '../src/intake/client.js';
import { createLogger } from '../src/log.js';
import { applyPage } from '../src/sync/apply-page.js';
import { loadCheckpoint } from '../src/sync/checkpoint.js';
import { defaultDelayPolicy, nextDelay } from '../src/sync/next-delay.js';
import { Poller } from '../src/sync/poller.js';
import { sleepUnlessAborted } from '../src/sync/sleep.js';
import { WorkerState } from '../src/sync/worker-state.js';
import { loadConfig } from '../src/config.js';
import { readMemory } from './rss.js';
import type { PageTiming } from './page-timings.js';

const config = loadConfig();
const log = createLogger({ level: config.LOG_LEVEL });
const database = await openDatabase({ url: config.DATABASE_URL });
const client = new IntakeClient({
  baseUrl: config.INTAKE_API_BASE_URL ?? '',
  apiKey: config.INTAKE_API_KEY ?? '',
  apiSecret: config.INTAKE_API_SECRET ?? '',
  timeoutMs: config.HTTP_TIMEOUT_MS,
  logger: log,
});
const clock = { now: () => Date.now() };
const policy = defaultDelayPolicy(config.POLL_INTERVAL_MS, config.POLL_BACKOFF_MAX_MS);
const pages: PageTiming[] = [];
// fetches complete in page order and each is applied before the one after it: a FIFO pairs them
const fetched: Array<{ startedAt: number; endedAt: number }> = [];
let lastApplyEnd = 0;

const poller = new Poller({
  fetchPage: async ({ iterator }, signal) => {
    const startedAt = performance.now();
    const page = await client.listEvents({ ...(iterator === null ? {} : { iterator }), limit: config.PAGE_LIMIT }, { signal });
    fetched.push({ startedAt, endedAt: performance.now() });
    return page;
  },
  applyPage: async (input) => {
    const started = performance.now();
    const fetch = fetched.shift() ?? { startedAt: started, endedAt: started };
    const result = await applyPage(database.db, { feed: config.FEED_NAME, ...input });
    const ended = performance.now();
    pages.push({
      events: input.events.length,
      fetch: fetch.endedAt - fetch.startedAt,
      fetch_wait: Math.max(0, fetch.endedAt - Math.max(fetch.startedAt, lastApplyEnd)),
      ...result.timingsMs,
      apply: ended - started,
    });
    lastApplyEnd = ended;
    return result;
  },
  loadCheckpoint: () => loadCheckpoint(database.db, config.FEED_NAME),
  clock,
  sleep: sleepUnlessAborted,
  nextDelay: (reason) => nextDelay(reason, policy, Math.random),
  state: new WorkerState(clock),
  log: log.child({ component: 'poller', feed: config.FEED_NAME }),
  drainMaxFailures: config.ONCE_MAX_FAILURES,
});

try {
  const summary = await poller.drain();
  const memory = await readMemory(process.pid);
  process.stdout.write(
    `${JSON.stringify({ summary, peak_rss_kb: memory?.hwmKb ?? process.resourceUsage().maxRSS, pages })}\n`,
  );
} finally {
  await database.close();
}

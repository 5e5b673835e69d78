// `npm run bench`: issue 4's measurements in one run on one Postgres server. Every database it creates is
// dropped at the end (unless --keep) and every child process is killed whatever happens.
import { randomBytes } from 'node:crypto';
import { parseBenchArgs, type BenchArgs } from './args.js';
import { measureCeiling } from './ceiling.js';
import { compileDrainWorker, type CompiledWorker } from './compile-worker.js';
import { createBenchDatabase, DEFAULT_SERVER_URL, dropUndroppedDatabases, type BenchDatabase } from './database.js';
import { runDrain, type DrainResult } from './drain.js';
import { measureIdle } from './idle.js';
import { measureLatency } from './latency.js';
import { describeMachine } from './machine.js';
import { measureManyFeeds } from './many-feeds.js';
import { measureMatchScaling } from './match-scaling.js';
import { insertFillerPrescriptions } from './filler-prescriptions.js';
import { measureNaive } from './naive.js';
import { killAllChildren } from './processes.js';
import { registerFixturePrescriptions } from './register.js';
import { formatReport, summaryLine, type BenchResults } from './report.js';
import { writeResultsFile } from './results-file.js';
import { startSandboxProcess, type SandboxProcess } from './sandbox-process.js';
import { measureWan, wanEventsFor, wanFeed, type WanResult } from './wan.js';
import { DEFAULT_FEED } from '../src/db/feed-name.js';

/** Prescriptions (4 events each) in the naive poller's feed: more than one transaction per event gets through in its time. */
const NAIVE_FEED_PRESCRIPTIONS = 25_000;

/** The feed the backlog drains consume, and their local prescriptions belong to. */
const DRAIN_FEED = 'bench';

/** Most prescriptions the match probe drains: 4 events each, so at most 40 pages per table size. */
const MATCH_PROBE_PRESCRIPTIONS = 2_500;

/** A fresh database for one phase (a copy of `template` when given), closed (and dropped unless --keep) when the phase ends. */
async function withDatabase<T>(
  serverUrl: string,
  name: string,
  keep: boolean,
  body: (db: BenchDatabase) => Promise<T>,
  template?: string,
): Promise<T> {
  const db = await createBenchDatabase(serverUrl, name, template ? { template } : {});
  try {
    return await body(db);
  } finally {
    await db.close(keep);
  }
}

/** A sandbox process for one phase, stopped when the phase ends. */
async function withSandbox<T>(label: string, body: (sandbox: SandboxProcess) => Promise<T>): Promise<T> {
  const sandbox = await startSandboxProcess(label);
  try {
    return await body(sandbox);
  } finally {
    await sandbox.stop();
  }
}

// what a signal must clean up besides child processes and databases
let compiledWorker: CompiledWorker | undefined;

const log = (message: string) => process.stderr.write(`bench: ${message}\n`);

/**
 * The backlog drain, `args.drains` times: the feed is seeded once and the matching prescriptions registered
 * once, into a template; each drain runs the worker into a fresh copy of it, after a CHECKPOINT, so every
 * drain starts from the same state and none shares the disk with the previous one's dirty pages.
 */
async function measureDrains(args: BenchArgs, serverUrl: string, stamp: string, worker: CompiledWorker) {
  const prescriptions = Math.ceil(args.events / 4);
  return withSandbox('drain', async (sandbox) => {
    const template = await createBenchDatabase(serverUrl, `${stamp}_drain`);
    try {
      const machine = await describeMachine(template.sql);
      const seeded = await sandbox.seed(prescriptions, 'rx');
      await registerFixturePrescriptions(template.database.db, 'rx', 0, seeded.prescriptions, DRAIN_FEED);
      await template.disconnect();
      const drains: DrainResult[] = [];
      for (let run = 1; run <= args.drains; run++) {
        log(`drain ${run} of ${args.drains}`);
        drains.push(
          await withDatabase(
            serverUrl,
            `${stamp}_drain_${run}`,
            args.keep,
            async (db) => {
              await db.sql`checkpoint`;
              return runDrain(worker.entry, sandbox, db.url, DRAIN_FEED);
            },
            template.name,
          ),
        );
      }
      return { machine, drains };
    } finally {
      await template.close(args.keep);
    }
  });
}

/** The drain over a slow network, once per round trip, each on a feed sized to last about args.wanSeconds. */
async function measureWanDrains(args: BenchArgs, serverUrl: string, stamp: string, worker: CompiledWorker): Promise<WanResult[]> {
  const results: WanResult[] = [];
  for (const rttMs of args.wanRttMs) {
    const events = wanEventsFor(rttMs, args.wanSeconds);
    log(`WAN drain: ${events.toLocaleString('en-US')} events with ${rttMs} ms of round trip`);
    results.push(
      await withDatabase(serverUrl, `${stamp}_wan_${rttMs}`, args.keep, (db) =>
        withSandbox(`wan-${rttMs}`, async (sandbox) => {
          const seeded = await sandbox.seed(events / 4, 'wan');
          await registerFixturePrescriptions(db.database.db, 'wan', 0, seeded.prescriptions, wanFeed(rttMs));
          await db.sql`checkpoint`;
          return measureWan(worker.entry, sandbox, db.url, rttMs);
        }),
      ),
    );
  }
  return results;
}

/** Every phase, one after the other on the same server, each in its own database. */
async function measureAll(args: BenchArgs, serverUrl: string, stamp: string, worker: CompiledWorker) {
  const prescriptions = Math.ceil(args.events / 4);
  log(`${args.drains} drains of ${prescriptions * 4} events (${prescriptions} prescriptions), databases ${stamp}_*`);
  const { drains, machine } = await measureDrains(args, serverUrl, stamp, worker);
  // right after the single-feed drains, so the two compare under about the same machine load
  log(`many feeds: the same ${prescriptions * 4} events split over ${args.feeds} feeds, drained at once by one process`);
  const manyFeeds = await withDatabase(serverUrl, `${stamp}_feeds`, args.keep, (db) =>
    withSandbox('feeds', (sandbox) => measureManyFeeds(worker.cliEntry, sandbox, db, prescriptions, args.feeds)),
  );
  log(`ceiling for ${args.ceilingSeconds} s, then naive for ${args.naiveSeconds} s`);
  const ceiling = await withDatabase(serverUrl, `${stamp}_scratch`, args.keep, (db) =>
    measureCeiling(db.sql, prescriptions, args.ceilingSeconds),
  );
  const naive = await withDatabase(serverUrl, `${stamp}_naive`, args.keep, (db) =>
    withSandbox('naive', async (sandbox) => {
      // the same local table size as the drain (index depth), and more feed than the naive poller can read in its time
      await insertFillerPrescriptions(db.sql, 'naive-filler', 1, Math.max(0, prescriptions - NAIVE_FEED_PRESCRIPTIONS), DEFAULT_FEED);
      const seeded = await sandbox.seed(Math.min(NAIVE_FEED_PRESCRIPTIONS, prescriptions), 'nv');
      await registerFixturePrescriptions(db.database.db, 'nv', 0, seeded.prescriptions, DEFAULT_FEED);
      return measureNaive(db.sql, sandbox, args.naiveSeconds);
    }),
  );
  const wan = await measureWanDrains(args, serverUrl, stamp, worker);
  log(`idle: ${args.idlePolls} polls of a caught-up daemon every ${args.idlePollIntervalMs} ms`);
  const idle = await withDatabase(serverUrl, `${stamp}_idle`, args.keep, (db) =>
    withSandbox('idle', (sandbox) => measureIdle(worker.cliEntry, sandbox, db.url, args.idlePolls, args.idlePollIntervalMs)),
  );
  log('idle again, the daemon started plain (no V8 flags: it relaunches itself with its own)');
  const idlePlain = await withDatabase(serverUrl, `${stamp}_idle_plain`, args.keep, (db) =>
    withSandbox('idle-plain', (sandbox) => measureIdle(worker.cliEntry, sandbox, db.url, args.idlePolls, args.idlePollIntervalMs, [])),
  );
  log(`match time per page, 10k then ${args.matchLarge.toLocaleString('en-US')} local prescriptions`);
  const match = await withDatabase(serverUrl, `${stamp}_match`, args.keep, (db) =>
    withSandbox('match', (sandbox) =>
      measureMatchScaling(worker.entry, sandbox, db, Math.min(MATCH_PROBE_PRESCRIPTIONS, prescriptions), args.matchLarge),
    ),
  );
  log(`steady-state latency, ${args.latencyRounds} rounds, poll interval ${args.pollIntervalMs} ms`);
  const latency = await withDatabase(serverUrl, `${stamp}_latency`, args.keep, (db) =>
    withSandbox('latency', (sandbox) => measureLatency(worker.cliEntry, sandbox, db, args.latencyRounds, args.pollIntervalMs)),
  );
  return { machine, drains, many_feeds: manyFeeds, ceiling, naive, wan, idle, idle_plain: idlePlain, match, latency };
}

async function main(): Promise<void> {
  const args = parseBenchArgs(process.argv.slice(2));
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const startedAt = new Date();
  const stamp = `intake_bench_${startedAt.toISOString().slice(0, 10).replaceAll('-', '')}_${randomBytes(3).toString('hex')}`;
  log('compiling the drain worker (it runs as plain JavaScript, like dist/)');
  const worker = await compileDrainWorker();
  compiledWorker = worker;
  let measured: Awaited<ReturnType<typeof measureAll>>;
  try {
    measured = await measureAll(args, serverUrl, stamp, worker);
  } finally {
    await worker.remove();
  }
  const results: BenchResults = {
    started_at: startedAt.toISOString(),
    command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
    ...measured,
  };
  const summary = summaryLine(results);
  const path = await writeResultsFile(args.resultsDir, results, summary);
  process.stdout.write(`${formatReport(results)}\n\nfull results: ${path}\n${JSON.stringify(summary)}\n`);
}

process.on('exit', killAllChildren);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAllChildren();
    void Promise.allSettled([dropUndroppedDatabases(), compiledWorker?.remove()]).finally(() => process.exit(130));
  });
}
try {
  await main();
} catch (error) {
  const err = error instanceof Error ? error : new Error(String(error));
  process.stderr.write(`bench: ${err.message}\n`);
  if (err.name !== 'BenchUsageError' && err.stack) process.stderr.write(`${err.stack}\n`);
  process.exitCode = err.name === 'BenchUsageError' ? 2 : 1;
}

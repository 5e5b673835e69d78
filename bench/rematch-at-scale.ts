// `npm run bench:rematch`: issue 19's rematch-at-scale measurement, realistic by default (issue 26): 100,000 events
// drained through the feed by the daemon before their prescriptions exist (held unmatched, no ANALYZE by the
// bench; `--seeded`: inserted by a script and analyzed, the old setup), and the
// daemon (`intake-sync run`, compiled as dist ships it) draining another backlog of the same database; then
// `prescriptions import` of 20,000 lines (10% matching held events) and `rematch` of every held event, each
// as its own CLI process. Reports their wall times, the longest stretch without a page applied during each
// (and during a quiet stretch before, for comparison), each batch's match-lock hold time and the load average.
// Everything it creates is dropped and every child killed, whatever happens.
import { randomBytes } from 'node:crypto';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { compileDrainWorker, type CompiledWorker } from './compile-worker.js';
import { createBenchDatabase, DEFAULT_SERVER_URL, dropUndroppedDatabases, type BenchDatabase } from './database.js';
import { expectCleanExit, killAllChildren, spawnNode, type BenchChild } from './processes.js';
import { registerFixturePrescriptions } from './register.js';
import { heldIdentity, importLines, insertHeldEvents } from './rematch-scale/held-events.js';
import { watchPages, type GapSummary } from './rematch-scale/page-gaps.js';
import { startSandboxProcess, type SandboxProcess } from './sandbox-process.js';
import { identityKey } from '../src/sync/matching/identity-key.js';

const FEED = 'bench';
const log = (message: string) => process.stderr.write(`bench:rematch: ${message}\n`);

const { values } = parseArgs({
  options: {
    held: { type: 'string', default: '100000' },
    import: { type: 'string', default: '20000' },
    'drain-events': { type: 'string', default: '600000' },
    keep: { type: 'boolean', default: false },
    // the old setup: held events inserted by a script, then ANALYZE (never sees missing statistics)
    seeded: { type: 'boolean', default: false },
  },
});
const SEEDED = values.seeded === true;
/** Realistic mode: the held events are the simulator's fixtures 0..HELD/4-1, the feed's first events. */
const HELD_FROM_REALISTIC = 0;
const HELD = Number(values.held);
const IMPORT = Number(values.import);
const DRAIN_EVENTS = Number(values['drain-events']);
for (const [flag, value] of [
  ['--held', HELD],
  ['--import', IMPORT],
  ['--drain-events', DRAIN_EVENTS],
] as const) {
  if (!Number.isInteger(value) || value < 100 || value > 5_000_000) {
    process.stderr.write(`bench:rematch: ${flag} must be a whole number between 100 and 5000000\n`);
    process.exit(2);
  }
}

let compiled: CompiledWorker | undefined;
let sandbox: SandboxProcess | undefined;
let db: BenchDatabase | undefined;
let daemon: BenchChild | undefined;
let dir: string | undefined;

async function cli(label: string, args: string[], env: NodeJS.ProcessEnv) {
  const started = performance.now();
  const child = spawnNode(label, [compiled!.cliEntry, ...args], env);
  const summary = await expectCleanExit(label, child);
  return { summary, started, ended: performance.now() };
}

async function main() {
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const stamp = `bench_rematch_${randomBytes(3).toString('hex')}`;
  const loadAtStart = loadavg();
  log('compiling the CLI');
  compiled = await compileDrainWorker();
  db = await createBenchDatabase(serverUrl, stamp);
  sandbox = await startSandboxProcess('rematch');
  const heldPrescriptions = Math.ceil(HELD / 4);
  const heldFrom = SEEDED ? undefined : HELD_FROM_REALISTIC;
  let seeded: { prescriptions: number; events: number };
  if (SEEDED) {
    log(`seeding a backlog of ${DRAIN_EVENTS.toLocaleString('en-US')} events and registering its prescriptions`);
    seeded = await sandbox.seed(Math.ceil(DRAIN_EVENTS / 4), 'rx');
    await registerFixturePrescriptions(db.database.db, 'rx', 0, seeded.prescriptions, FEED);
    log(`inserting ${HELD.toLocaleString('en-US')} held unmatched events (and analyzing them)`);
    await insertHeldEvents(db.sql, FEED, HELD);
  } else {
    // one seed: fixtures 0..heldPrescriptions-1 come first in the feed and nobody registers them, so the
    // daemon drains them through the real page path into quarantine (held); the rest is the backlog it
    // keeps draining during the import and the rematch. No ANALYZE: statistics are what the server has.
    log(`seeding ${HELD.toLocaleString('en-US')} events to be held, then a backlog of ${DRAIN_EVENTS.toLocaleString('en-US')}`);
    const all = await sandbox.seed(heldPrescriptions + Math.ceil(DRAIN_EVENTS / 4), 'rx');
    await registerFixturePrescriptions(db.database.db, 'rx', heldPrescriptions, all.prescriptions, FEED);
    seeded = { prescriptions: all.prescriptions - heldPrescriptions, events: all.events - heldPrescriptions * 4 };
  }
  dir = await mkdtemp(join(tmpdir(), 'bench-rematch-'));
  const file = join(dir, 'import.ndjson');
  await writeFile(
    file,
    `${importLines(IMPORT, IMPORT / 10, heldFrom)
      .map((l) => JSON.stringify(l))
      .join('\n')}\n`,
  );
  await db.sql`checkpoint`;

  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    INTAKE_API_BASE_URL: sandbox.baseUrl,
    INTAKE_API_KEY: sandbox.key,
    INTAKE_API_SECRET: sandbox.secret,
    FEED_NAME: FEED,
    LOG_LEVEL: 'warn',
    HEALTH_PORT: '0',
  };
  const watcher = watchPages(db.sql, FEED);
  log('starting the daemon');
  daemon = spawnNode('daemon', [compiled.cliEntry, 'run'], env);
  const heldFromFeed = performance.now();
  if (!SEEDED) {
    log(`waiting for the daemon to hold ${HELD.toLocaleString('en-US')} unmatched events`);
    for (;;) {
      const [row] = await db.sql<{ n: number }[]>`
        select count(*)::int as n from intake_sync.quarantine where feed = ${FEED} and reason = 'unmatched'`;
      if ((row?.n ?? 0) >= HELD) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  const heldSeconds = (performance.now() - heldFromFeed) / 1000;
  while (watcher.pages() < 20) await new Promise((resolve) => setTimeout(resolve, 50));
  const quietFrom = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const quiet = watcher.within(quietFrom, performance.now());

  log(`importing ${IMPORT.toLocaleString('en-US')} prescriptions`);
  const imported = await cli('prescriptions import', ['prescriptions', 'import', file, '--json'], env);
  const importGaps = watcher.within(imported.started, imported.ended);

  // prescriptions for 2,000 more held identities, registered behind the rematch's back (a restore,
  // a hand-made row): only a rematch finds them
  const hidden = [];
  for (let i = IMPORT / 10; i < IMPORT / 5; i++) {
    const identity = heldIdentity(i, heldFrom);
    hidden.push({ external_id: `hidden-rx-${i}`, key: identityKey(identity) });
  }
  await db.sql`insert into intake_sync.prescriptions (feed, external_id, patient_first_name, patient_last_name, patient_state,
      patient_dob, prescriber_npi, written_date, drug_ndc, identity_key)
    select ${FEED}, external_id, 'x', 'x', 'x', 'x', 'x', 'x', 'x', key
    from jsonb_to_recordset(${JSON.stringify(hidden)}::text::jsonb) as r(external_id text, key text)`;

  log('rematching every held event');
  const rematched = await cli('rematch', ['rematch', '--json'], env);
  const rematchGaps = watcher.within(rematched.started, rematched.ended);
  const pagesAtEnd = watcher.pages();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const stillDraining = watcher.pages() > pagesAtEnd;
  await watcher.stop();
  await daemon.stop();

  const result = {
    mode: SEEDED ? 'seeded (inserted, analyzed)' : 'realistic (through the feed, no ANALYZE)',
    held_events: HELD,
    held_through_feed_seconds: SEEDED ? null : round(heldSeconds),
    import_lines: IMPORT,
    drain_backlog_events: seeded.events,
    drain_still_running_after_rematch: stillDraining,
    quiet_drain: quiet,
    import: { seconds: round((imported.ended - imported.started) / 1000), pages: importGaps, summary: imported.summary },
    rematch: { seconds: round((rematched.ended - rematched.started) / 1000), pages: rematchGaps, summary: rematched.summary },
    load_average: { at_start: loadAtStart.map(round), at_end: loadavg().map(round) },
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  report(result.import.seconds, importGaps, result.rematch.seconds, rematchGaps, quiet, stillDraining);
  const hold = (summary: Record<string, unknown>) => (typeof summary.longestLockHeldMs === 'number' ? summary.longestLockHeldMs : 'n/a');
  log(`longest match-lock hold: import ${hold(imported.summary)} ms, rematch ${hold(rematched.summary)} ms`);
  log(`pages applied by the daemon: during the import ${importGaps.pages}, during the rematch ${rematchGaps.pages}`);
}

const round = (n: number) => Math.round(n * 100) / 100;

function report(importS: number, importGaps: GapSummary, rematchS: number, rematchGaps: GapSummary, quiet: GapSummary, draining: boolean) {
  const verdict = (ok: boolean) => (ok ? 'ok' : 'OVER');
  log(
    `import  ${importS} s (${verdict(importS < 10)} < 10 s), longest without a page ${importGaps.longest_gap_ms} ms (${verdict(importGaps.longest_gap_ms < 2000)} < 2 s)`,
  );
  log(
    `rematch ${rematchS} s (${verdict(rematchS < 30)} < 30 s), longest without a page ${rematchGaps.longest_gap_ms} ms (${verdict(rematchGaps.longest_gap_ms < 2000)} < 2 s)`,
  );
  log(`quiet drain: longest without a page ${quiet.longest_gap_ms} ms over ${quiet.pages} pages`);
  if (!draining) log('warning: the drain had caught up before the rematch ended; raise --drain-events');
}

async function cleanUp() {
  await daemon?.stop().catch(() => {});
  await sandbox?.stop().catch(() => {});
  if (db) await db.close(values.keep === true).catch(() => {});
  await compiled?.remove().catch(() => {});
  if (dir) await rm(dir, { recursive: true, force: true });
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAllChildren();
    void Promise.allSettled([dropUndroppedDatabases(), compiled?.remove()]).finally(() => process.exit(130));
  });
}

try {
  await main();
} catch (error) {
  process.stderr.write(`bench:rematch: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await cleanUp();
  killAllChildren();
}

// `node --import tsx bench/drain-compare.ts --baseline DIR`: the single-feed backlog drain of two checkouts, alternated
// in one run (baseline, candidate, baseline, candidate, ...) so both see about the same machine load. Each side runs
// entirely from its own checkout: its migrations, its simulator, its registration and its compiled drain worker
// (bench/drain-worker.ts, as `npm run bench` drains). Prints each drain with the load average it started at and the CPU
// seconds of the worker and of its Postgres backends (on a shared machine the wall time swings with other load; the CPU
// a drain costs hardly does), the medians and their ratios; writes `<results-dir>/<date>-drain-compare.json`.
// Databases are dropped, children killed.
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as CompileWorker from './compile-worker.js';
import type * as Database from './database.js';
import type * as Drain from './drain.js';
import { findProcess, sampleCpu } from './cpu-sampler.js';
import { parseDrainCompareArgs } from './drain-compare-args.js';
import type * as Processes from './processes.js';
import type * as Register from './register.js';
import type * as SandboxProcess from './sandbox-process.js';

/** The feed the drains consume (as in bench/run.ts). */
const DRAIN_FEED = 'bench';

/** One checkout's bench modules, imported from that checkout so it runs its own code. */
interface Side {
  label: 'baseline' | 'candidate';
  tree: string;
  compile: typeof CompileWorker;
  database: typeof Database;
  drain: typeof Drain;
  processes: typeof Processes;
  register: typeof Register;
  sandboxes: typeof SandboxProcess;
}

interface Prepared {
  side: Side;
  worker: CompileWorker.CompiledWorker;
  sandbox: SandboxProcess.SandboxProcess;
  template: Database.BenchDatabase;
}

interface DrainRow {
  pair: number;
  side: Side['label'];
  load_1m: number;
  events: number;
  seconds: number;
  events_per_s: number;
  peak_rss_mb: number;
  /** CPU seconds of the worker process, and of the Postgres backends serving its database (load-independent) */
  worker_cpu_s: number;
  postgres_cpu_s: number;
  prepare_p50_ms: number;
  write_p50_ms: number;
}

const log = (message: string) => process.stderr.write(`drain-compare: ${message}\n`);

async function loadSide(label: Side['label'], tree: string): Promise<Side> {
  const from = async <T>(file: string) => (await import(pathToFileURL(join(tree, 'bench', file)).href)) as T;
  return {
    label,
    tree,
    compile: await from('compile-worker.ts'),
    database: await from('database.ts'),
    drain: await from('drain.ts'),
    processes: await from('processes.ts'),
    register: await from('register.ts'),
    sandboxes: await from('sandbox-process.ts'),
  };
}

/** Compiles the side's worker, seeds its simulator and registers the matching prescriptions into a template. */
async function prepare(side: Side, serverUrl: string, stamp: string, prescriptions: number): Promise<Prepared> {
  log(`${side.label} (${side.tree}): compiling the drain worker, seeding ${prescriptions * 4} events`);
  const worker = await side.compile.compileDrainWorker();
  const sandbox = await side.sandboxes.startSandboxProcess(`compare-${side.label}`);
  await sandbox.seed(prescriptions, 'rx');
  const template = await side.database.createBenchDatabase(serverUrl, `${stamp}_${side.label}`);
  await side.register.registerFixturePrescriptions(template.database.db, 'rx', 0, prescriptions, DRAIN_FEED);
  await template.disconnect();
  return { side, worker, sandbox, template };
}

async function drainOnce(p: Prepared, serverUrl: string, stamp: string, pair: number): Promise<DrainRow> {
  const load = loadavg()[0] ?? 0;
  const db = await p.side.database.createBenchDatabase(serverUrl, `${stamp}_${p.side.label}_${pair}`, { template: p.template.name });
  try {
    await db.sql`checkpoint`;
    // the worker is found by its compiled entry (unique per side); the backends by database, the harness's own excluded
    let workerPid: number | undefined;
    const worker = sampleCpu(async () => {
      workerPid ??= await findProcess(p.worker.entry);
      return workerPid === undefined ? [] : [workerPid];
    });
    const backends = sampleCpu(async () =>
      (await db.sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${db.name} and pid <> pg_backend_pid()`).map(
        (r) => r.pid,
      ),
    );
    const result = await p.side.drain.runDrain(p.worker.entry, p.sandbox, db.url, DRAIN_FEED);
    const [workerCpu, postgresCpu] = [await worker.stop(), await backends.stop()];
    return {
      pair,
      side: p.side.label,
      load_1m: Math.round(load * 100) / 100,
      events: result.events,
      seconds: Math.round(result.seconds * 100) / 100,
      events_per_s: Math.round(result.events_per_s),
      peak_rss_mb: Math.round(result.peak_rss_mb * 10) / 10,
      worker_cpu_s: Math.round(workerCpu * 100) / 100,
      postgres_cpu_s: Math.round(postgresCpu * 100) / 100,
      prepare_p50_ms: Math.round(result.per_page_ms.prepare.p50 * 100) / 100,
      write_p50_ms: Math.round(result.per_page_ms.write.p50 * 100) / 100,
    };
  } finally {
    await db.close(false);
  }
}

/** The median (the mean of the two middles for an even count). */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const MEASURES = ['events_per_s', 'worker_cpu_s', 'postgres_cpu_s'] as const;

/** Each side's median of each measure, candidate / baseline of the medians, and the median of the per-pair ratios. */
function report(rows: readonly DrainRow[]) {
  const of = (side: Side['label'], measure: (typeof MEASURES)[number]) => rows.filter((r) => r.side === side).map((r) => r[measure]);
  const pairRatios = (measure: (typeof MEASURES)[number]) => {
    const ratios: number[] = [];
    for (const row of rows) {
      const baseline = rows.find((r) => r.pair === row.pair && r.side === 'baseline');
      if (row.side === 'candidate' && baseline) ratios.push(row[measure] / baseline[measure]);
    }
    return ratios;
  };
  return Object.fromEntries(
    MEASURES.map((measure) => {
      const baseline = median(of('baseline', measure));
      const candidate = median(of('candidate', measure));
      return [
        measure,
        {
          baseline_median: baseline,
          candidate_median: candidate,
          ratio_of_medians: candidate / baseline,
          median_pair_ratio: median(pairRatios(measure)),
        },
      ];
    }),
  ) as Record<
    (typeof MEASURES)[number],
    { baseline_median: number; candidate_median: number; ratio_of_medians: number; median_pair_ratio: number }
  >;
}

function formatTable(rows: readonly DrainRow[], summary: ReturnType<typeof report>): string {
  const lines = [
    '| pair | side | load (1 min) | seconds | events/s | worker CPU s | Postgres CPU s | peak RSS MB | prepare p50 ms | write p50 ms |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.pair} | ${r.side} | ${r.load_1m.toFixed(2)} | ${r.seconds.toFixed(2)} | ${r.events_per_s.toLocaleString('en-US')} | ${r.worker_cpu_s.toFixed(2)} | ${r.postgres_cpu_s.toFixed(2)} | ${r.peak_rss_mb} | ${r.prepare_p50_ms} | ${r.write_p50_ms} |`,
    ),
    '',
    '| measure | baseline median | candidate median | candidate / baseline (medians) | median of the pair ratios |',
    '|---|---|---|---|---|',
    ...MEASURES.map((m) => {
      const x = summary[m];
      const digits = m === 'events_per_s' ? 0 : 2;
      return `| ${m} | ${x.baseline_median.toFixed(digits)} | ${x.candidate_median.toFixed(digits)} | ${x.ratio_of_medians.toFixed(3)} | ${x.median_pair_ratio.toFixed(3)} |`;
    }),
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const args = parseDrainCompareArgs(process.argv.slice(2));
  const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const startedAt = new Date();
  const stamp = `intake_cmp_${startedAt.toISOString().slice(0, 10).replaceAll('-', '')}_${randomBytes(3).toString('hex')}`;
  const prescriptions = Math.ceil(args.events / 4);
  const sides = [
    await loadSide('baseline', resolve(args.baseline)),
    await loadSide('candidate', resolve(args.candidate ?? join(import.meta.dirname, '..'))),
  ];
  cleanups.push(...sides);
  const prepared: Prepared[] = [];
  try {
    for (const side of sides) prepared.push(await prepare(side, serverUrl, stamp, prescriptions));
    const rows: DrainRow[] = [];
    for (let pair = 1; pair <= args.pairs; pair++) {
      for (const p of prepared) {
        log(`pair ${pair} of ${args.pairs}: ${p.side.label}`);
        const row = await drainOnce(p, serverUrl, stamp, pair);
        log(`  ${row.events_per_s} events/s at load ${row.load_1m}`);
        rows.push(row);
      }
    }
    const summary = report(rows);
    const folder = resolve(join(import.meta.dirname, '..'), args.resultsDir);
    await mkdir(folder, { recursive: true });
    const path = join(folder, `${startedAt.toISOString().slice(0, 10)}-drain-compare.json`);
    const command = `node --import tsx bench/drain-compare.ts ${process.argv.slice(2).join(' ')}`;
    await writeFile(
      path,
      `${JSON.stringify({ started_at: startedAt.toISOString(), command, baseline: sides[0]?.tree, candidate: sides[1]?.tree, summary, drains: rows }, null, 2)}\n`,
    );
    process.stdout.write(`${formatTable(rows, summary)}\n\nfull results: ${path}\n${JSON.stringify(summary)}\n`);
  } finally {
    for (const p of prepared) {
      await p.sandbox.stop().catch(() => {});
      await p.template.close(false).catch(() => {});
      await p.worker.remove().catch(() => {});
    }
  }
}

// every side's own child registry and database list: a signal or an error cleans up both
const cleanups: Side[] = [];
process.on('exit', () => {
  for (const side of cleanups) side.processes.killAllChildren();
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const side of cleanups) side.processes.killAllChildren();
    void Promise.allSettled(cleanups.map((side) => side.database.dropUndroppedDatabases())).finally(() => process.exit(130));
  });
}
try {
  await main();
} catch (error) {
  const err = error instanceof Error ? error : new Error(String(error));
  process.stderr.write(`drain-compare: ${err.message}\n`);
  if (err.name !== 'BenchUsageError' && err.stack) process.stderr.write(`${err.stack}\n`);
  process.exitCode = err.name === 'BenchUsageError' ? 2 : 1;
}

// `npm run bench:statistics`: the statistics task's (src/sync/statistics/) cost on a backlog drain: the
// bench's drain, alternately without the task and with it running from the drain's start every
// `--interval-ms` (the default's 60 s would run it once or not at all in a short drain), or with the
// daemon's own settings (`--default`), `--runs` each. After each drain without it: one pass of the
// task alone on what the drain left, its CPU beside the drain's (load-independent; statistics-pass-cpu.ts).
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { compileDrainWorker } from './compile-worker.js';
import { runBench } from './bench-main.js';
import { createBenchDatabase, DEFAULT_SERVER_URL } from './database.js';
import { runDrain } from './drain.js';
import { registerFixturePrescriptions } from './register.js';
import { startSandboxProcess } from './sandbox-process.js';
import { sampleDrainCpu, statisticsPassCpu } from './statistics-pass-cpu.js';

const USAGE = 'usage: npm run bench:statistics -- [--events N] [--runs N] [--interval-ms MS | --default]';
const FEED = 'statistics';

function wholeNumber(name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  const value = Number(text ?? fallback);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`--${name}: must be a whole number from ${min} to ${max}\n${USAGE}`);
  return value;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: { events: { type: 'string' }, runs: { type: 'string' }, 'interval-ms': { type: 'string' }, default: { type: 'boolean' } },
  });
  const events = wholeNumber('events', values.events, 200_000, 1_000, 2_000_000);
  const runs = wholeNumber('runs', values.runs, 2, 1, 10);
  const intervalMs = wholeNumber('interval-ms', values['interval-ms'], 5_000, 100, 600_000);
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const stamp = `intake_benchstat_${randomBytes(3).toString('hex')}`;
  const worker = await compileDrainWorker();
  const sandbox = await startSandboxProcess('statistics');
  const template = await createBenchDatabase(serverUrl, `${stamp}_t`);
  const rates: Record<'off' | 'on', number[]> = { off: [], on: [] };
  try {
    const seeded = await sandbox.seed(Math.ceil(events / 4), 'st');
    await registerFixturePrescriptions(template.database.db, 'st', 0, seeded.prescriptions, FEED);
    await template.disconnect();
    for (let run = 1; run <= runs; run++) {
      // alternated, so a change in the machine's load falls on both
      for (const mode of ['off', 'on'] as const) {
        const db = await createBenchDatabase(serverUrl, `${stamp}_${mode}_${run}`, { template: template.name });
        try {
          await db.sql`checkpoint`;
          // --default: the daemon's settings (the first pass 10 s after taking the lead, then every 60 s)
          process.env.BENCH_STATISTICS_MS = mode === 'off' ? 'off' : values.default ? 'default' : String(intervalMs);
          const cpu = mode === 'off' ? sampleDrainCpu(serverUrl, db.name, worker.entry) : undefined;
          const drain = await runDrain(worker.entry, sandbox, db.url, FEED);
          const drainCpu = await cpu?.stop();
          const [analyzed] = await db.sql<{ n: number }[]>`
            select count(*)::int as n from pg_stat_user_tables where last_analyze is not null`;
          rates[mode].push(drain.events_per_s);
          if (drainCpu !== undefined) {
            // the pass the task would run on what this drain left (nothing analyzed yet), alone
            const pass = await statisticsPassCpu(db.url, db.database.names);
            const share = Math.round((pass.cpu_s / drainCpu) * 1000) / 10;
            process.stdout.write(
              `${JSON.stringify({ run, drain_cpu_s: Math.round(drainCpu * 10) / 10, pass, pass_share_of_drain_cpu_pct: share })}\n`,
            );
          }
          process.stdout.write(
            `${JSON.stringify({ statistics: mode, interval_ms: mode === 'on' ? (values.default ? 'default' : intervalMs) : null, run, events: drain.events, seconds: Math.round(drain.seconds * 10) / 10, events_per_s: Math.round(drain.events_per_s), tables_analyzed: analyzed?.n ?? 0 })}\n`,
          );
        } finally {
          await db.close(false);
        }
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    process.stdout.write(`${JSON.stringify({ slowdown_pct: Math.round((1 - mean(rates.on) / mean(rates.off)) * 1000) / 10 })}\n`);
  } finally {
    delete process.env.BENCH_STATISTICS_MS;
    await template.close(false);
    await sandbox.stop();
    await worker.remove();
  }
}

await runBench('bench:statistics', main);

// `npm run bench:wan`: only the WAN drains of `npm run bench` (bench/wan.ts), each round trip `--runs`
// times, for checking the poller's turnaround without the hour-long full run. Same worker, same proxy.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { compileDrainWorker } from './compile-worker.js';
import { runBench } from './bench-main.js';
import { createBenchDatabase, DEFAULT_SERVER_URL } from './database.js';
import { registerFixturePrescriptions } from './register.js';
import { startSandboxProcess } from './sandbox-process.js';
import { measureWan, wanEventsFor, wanFeed, type WanResult } from './wan.js';

const USAGE =
  'usage: npm run bench:wan -- [--rtt-ms 50,150] [--runs N (1-10)] [--seconds S (1-600)] [--flags="daemon;--max-semi-space-size=4" (sets alternated per run)]';

function parse(argv: readonly string[]): { rtts: number[]; runs: number; seconds: number; sets: string[] } {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: { 'rtt-ms': { type: 'string' }, runs: { type: 'string' }, seconds: { type: 'string' }, flags: { type: 'string' } },
  });
  const rttText = values['rtt-ms'] ?? '50,150';
  if (!/^\d{1,4}(,\d{1,4})*$/.test(rttText)) throw new Error(`--rtt-ms: must be a comma-separated list of whole ms\n${USAGE}`);
  const runs = Number(values.runs ?? 2);
  if (!Number.isInteger(runs) || runs < 1 || runs > 10) throw new Error(`--runs: must be a whole number from 1 to 10\n${USAGE}`);
  const seconds = Number(values.seconds ?? 15);
  if (!(seconds >= 1 && seconds <= 600)) throw new Error(`--seconds: must be from 1 to 600\n${USAGE}`);
  const sets = (values.flags ?? 'daemon').split(';').map((set) => set.trim());
  for (const set of sets) {
    if (set !== 'daemon' && !/^(--[a-z0-9-]+(=[0-9a-z]+)?)( --[a-z0-9-]+(=[0-9a-z]+)?)*$/.test(set)) {
      throw new Error(`--flags: "${set}" is not daemon or V8 flags such as --max-semi-space-size=1\n${USAGE}`);
    }
  }
  return { rtts: rttText.split(',').map(Number), runs, seconds, sets };
}

const round = (n: number, places = 3) => Math.round(n * 10 ** places) / 10 ** places;

async function main(): Promise<void> {
  const { rtts, runs, seconds, sets } = parse(process.argv.slice(2));
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const stamp = `intake_benchwan_${randomBytes(3).toString('hex')}`;
  const worker = await compileDrainWorker();
  const results: WanResult[] = [];
  try {
    for (const rttMs of rtts) {
      for (let run = 1; run <= runs; run++) {
        for (const set of sets) {
          const events = wanEventsFor(rttMs, seconds);
          process.stderr.write(`bench:wan: ${rttMs} ms, run ${run} of ${runs}, ${events} events\n`);
          const db = await createBenchDatabase(serverUrl, `${stamp}_${rttMs}_${run}`);
          const sandbox = await startSandboxProcess(`wan-${rttMs}`);
          try {
            const seeded = await sandbox.seed(events / 4, 'wan');
            await registerFixturePrescriptions(db.database.db, 'wan', 0, seeded.prescriptions, wanFeed(rttMs));
            await db.sql`checkpoint`;
            const result = await measureWan(worker.entry, sandbox, db.url, rttMs, set === 'daemon' ? undefined : set.split(' '));
            results.push(result);
            process.stdout.write(
              `${JSON.stringify({
                rtt_ms: rttMs,
                run,
                flags: set,
                events_per_s: Math.round(result.events_per_s),
                limit_events_per_s: Math.round(result.limit_events_per_s),
                ratio_to_limit: round(result.ratio_to_limit),
                turnaround_ms_mean: round(result.turnaround_ms.mean, 2),
                turnaround_ms_p50: round(result.turnaround_ms.p50, 2),
                wire_ms_mean: round(result.wire_ms.mean, 2),
                operator_ms_mean: round(result.operator_ms.mean, 2),
                connections: result.connections,
                peak_rss_mb: result.peak_rss_mb,
              })}\n`,
            );
          } finally {
            await sandbox.stop();
            await db.close(false);
          }
        }
      }
    }
  } finally {
    await worker.remove();
  }
}

await runBench('bench:wan', main);

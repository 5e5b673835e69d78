// `npm run bench:memory`: the daemon's memory under V8 flag sets, for choosing DAEMON_NODE_FLAGS
// (src/cli/daemon-node-flags.ts): per set, a caught-up daemon's idle RSS (`intake-sync run`) and a
// backlog drain's peak RSS and speed (the bench's drain worker). `--flags` takes sets separated by `;`,
// flags inside a set by spaces; `plain` is no flag at all (the daemon relaunches itself with its own).
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { compileDrainWorker } from './compile-worker.js';
import { runBench } from './bench-main.js';
import { createBenchDatabase, DEFAULT_SERVER_URL } from './database.js';
import { runDrain } from './drain.js';
import { measureIdle } from './idle.js';
import { registerFixturePrescriptions } from './register.js';
import { startSandboxProcess } from './sandbox-process.js';

const USAGE = 'usage: npm run bench:memory -- [--flags="plain;--max-semi-space-size=1"] [--events N] [--idle-polls N] [--drains N]';
const FEED = 'memory';

function wholeNumber(name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  const value = Number(text ?? fallback);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`--${name}: must be a whole number from ${min} to ${max}\n${USAGE}`);
  return value;
}

function parse(argv: readonly string[]) {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: { flags: { type: 'string' }, events: { type: 'string' }, 'idle-polls': { type: 'string' }, drains: { type: 'string' } },
  });
  const sets = (values.flags ?? 'plain;daemon').split(';').map((set) => set.trim());
  for (const set of sets) {
    if (set !== 'plain' && set !== 'daemon' && !/^(--[a-z0-9-]+(=[0-9a-z]+)?)( --[a-z0-9-]+(=[0-9a-z]+)?)*$/.test(set)) {
      throw new Error(`--flags: "${set}" is not plain, daemon, or V8 flags such as --max-semi-space-size=1\n${USAGE}`);
    }
  }
  return {
    sets,
    events: wholeNumber('events', values.events, 200_000, 1_000, 2_000_000),
    idlePolls: wholeNumber('idle-polls', values['idle-polls'], 30, 1, 1_000),
    drains: wholeNumber('drains', values.drains, 1, 0, 10),
  };
}

const flagsOf = (set: string): string[] | undefined => (set === 'daemon' ? undefined : set === 'plain' ? [] : set.split(' '));
const round = (n: number) => Math.round(n * 10) / 10;

async function main(): Promise<void> {
  const { sets, events, idlePolls, drains } = parse(process.argv.slice(2));
  const serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
  const stamp = `intake_benchmem_${randomBytes(3).toString('hex')}`;
  const worker = await compileDrainWorker();
  const sandbox = await startSandboxProcess('memory');
  const template = await createBenchDatabase(serverUrl, `${stamp}_t`);
  try {
    const seeded = await sandbox.seed(Math.ceil(events / 4), 'mem');
    await registerFixturePrescriptions(template.database.db, 'mem', 0, seeded.prescriptions, FEED);
    await template.disconnect();
    for (const set of sets) {
      const flags = flagsOf(set);
      for (let run = 1; run <= drains; run++) {
        const db = await createBenchDatabase(serverUrl, `${stamp}_${run}`, { template: template.name });
        try {
          await db.sql`checkpoint`;
          // the drain worker is not the CLI: it never relaunches, so `plain` drains with no flag at all
          const drain = await runDrain(worker.entry, sandbox, db.url, FEED, flags);
          process.stdout.write(
            `${JSON.stringify({ flags: set, phase: 'drain', run, events: drain.events, events_per_s: Math.round(drain.events_per_s), peak_rss_mb: round(drain.peak_rss_mb) })}\n`,
          );
        } finally {
          await db.close(false);
        }
      }
      if (idlePolls > 0) {
        // an empty operator of its own: the drain's sandbox holds the backlog
        const db = await createBenchDatabase(serverUrl, `${stamp}_idle`);
        const empty = await startSandboxProcess('memory-idle');
        try {
          const idle = await measureIdle(worker.cliEntry, empty, db.url, idlePolls, 1_000, flags);
          process.stdout.write(
            `${JSON.stringify({ flags: set, phase: 'idle', polls: idle.polls, rss_mb_start: round(idle.rss_mb_start), rss_mb_max: round(idle.rss_mb_max), cpu_pct_per_5s_poll: Math.round(idle.cpu_pct_per_5s_poll * 1000) / 1000 })}\n`,
          );
        } finally {
          await empty.stop();
          await db.close(false);
        }
      }
    }
  } finally {
    await template.close(false);
    await sandbox.stop();
    await worker.remove();
  }
}

await runBench('bench:memory', main);

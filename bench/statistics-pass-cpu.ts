// The statistics pass's own CPU beside the drain's, read from /proc (the server must run on this
// machine): a share that does not move with the machine's load. The drain-time comparison of
// bench:statistics does move: on two shared cores any neighbour's load comes straight off the drain.
import { drizzle } from 'drizzle-orm/postgres-js';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import type { StoreNames } from '../src/db/store-names.js';
import { tablesDue } from '../src/sync/statistics/decisions.js';
import { analyzeTable, readTableActivity } from '../src/sync/statistics/table-activity.js';
import { cpuSeconds, findProcess, sampleCpu } from './cpu-sampler.js';

/**
 * Samples the CPU of the drain's worker (the process running `workerEntry`) and of every backend
 * connected to `database`, until stop(): the CPU seconds they used (the simulator's and the
 * server's background processes' are not counted: a lower bound of the drain's cost).
 */
export function sampleDrainCpu(serverUrl: string, database: string, workerEntry: string): { stop(): Promise<number> } {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  let worker: number | undefined;
  const sampler = sampleCpu(async () => {
    const backends = await admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${database}`;
    worker ??= await findProcess(workerEntry);
    return [...backends.map((b) => b.pid), ...(worker === undefined ? [] : [worker])];
  }, 250);
  return {
    async stop() {
      const seconds = await sampler.stop();
      await admin.end({ timeout: 5 });
      return seconds;
    },
  };
}

export interface PassCpu {
  cpu_s: number;
  wall_s: number;
  tables: string[];
}

/** One pass of the statistics task's own code (tables due, then each ANALYZE) in a backend of its own, and the CPU it used. */
export async function statisticsPassCpu(url: string, names: StoreNames): Promise<PassCpu> {
  const client = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const db = drizzle(client);
    const [row] = await client<{ pid: number }[]>`select pg_backend_pid() as pid`;
    const pid = row?.pid ?? -1;
    const before = (await cpuSeconds(pid)) ?? Number.NaN;
    const started = performance.now();
    const { tables, threshold } = await readTableActivity(db, names);
    const due = tablesDue(tables, threshold);
    for (const table of due) await analyzeTable(db, names, table.table);
    const wall = (performance.now() - started) / 1000;
    const after = (await cpuSeconds(pid)) ?? Number.NaN;
    return { cpu_s: Math.round((after - before) * 100) / 100, wall_s: Math.round(wall * 100) / 100, tables: due.map((t) => t.table) };
  } finally {
    await client.end({ timeout: 5 });
  }
}

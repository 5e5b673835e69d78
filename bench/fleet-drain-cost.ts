// What the replicas (and the machine) spend while backlogged feeds drain: per replica its CPU, its
// database statements (the simple-protocol ones apart) and its operator requests, and the whole machine's
// CPU, between two snapshots. Says whether a drain was CPU-bound and what more replicas add.
import { machineCpuTicks } from './cpu-sampler.js';
import type { Replica } from './fleet-replica.js';
import { round } from './stats.js';

/** One replica's cost over the drain. */
export interface ReplicaDrainCost {
  /** CPU (user + system) as a share of one core, % */
  cpu_pct: number;
  db_statements_per_s: number;
  /** simple-protocol Query messages: the lease session's statements, and during a drain also the page transactions' own (not the lease's alone) */
  simple_queries_per_s: number;
  operator_requests_per_s: number;
}

export interface DrainCost {
  seconds: number;
  replicas: ReplicaDrainCost[];
  /** the machine's busy CPU (every process: replicas, Postgres, sandbox, anything else), % of all its cores */
  machine_cpu_busy_pct: number;
}

interface Snapshot {
  at: number;
  cpu: (number | undefined)[];
  statements: number[];
  simple: number[];
  machine: { busy: number; total: number };
}

/** The counters now. */
export async function drainSnapshot(replicas: readonly Replica[]): Promise<Snapshot> {
  const [cpu, machine] = await Promise.all([Promise.all(replicas.map((replica) => replica.cpuSeconds())), machineCpuTicks()]);
  return {
    at: performance.now(),
    cpu,
    statements: replicas.map((replica) => replica.statements.simpleQueries + replica.statements.executes),
    simple: replicas.map((replica) => replica.statements.simpleQueries),
    machine,
  };
}

/** Pure but for the replicas' request times: the cost between two snapshots. */
export function drainCost(replicas: readonly Replica[], from: Snapshot, to: Snapshot): DrainCost {
  const seconds = Math.max(0.001, (to.at - from.at) / 1000);
  const rate = (a: number | undefined, b: number | undefined) => round(((b ?? Number.NaN) - (a ?? Number.NaN)) / seconds, 1);
  return {
    seconds: round(seconds, 2),
    replicas: replicas.map((replica, i) => ({
      cpu_pct: round((100 * ((to.cpu[i] ?? Number.NaN) - (from.cpu[i] ?? Number.NaN))) / seconds, 1),
      db_statements_per_s: rate(from.statements[i], to.statements[i]),
      simple_queries_per_s: rate(from.simple[i], to.simple[i]),
      operator_requests_per_s: round(replica.requestTimes.filter((t) => t >= from.at && t < to.at).length / seconds, 1),
    })),
    machine_cpu_busy_pct: round((100 * (to.machine.busy - from.machine.busy)) / Math.max(1, to.machine.total - from.machine.total), 1),
  };
}

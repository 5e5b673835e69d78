// The idle cost of a caught-up fleet: every replica's CPU, RSS, database statements and operator
// requests over one window, and its database sessions.
import { setTimeout as sleep } from 'node:timers/promises';
import type postgres from 'postgres';
import { BenchProcessError } from './bench-process-error.js';
import { readConnections } from './fleet-leases.js';
import type { Replica } from './fleet-replica.js';
import { type RequestRate, requestRate } from './fleet-request-rate.js';

/** One replica's idle cost over the window. */
export interface ReplicaIdle {
  /** CPU (user + system, all threads) as a share of one core, % */
  cpu_pct: number;
  rss_mb_max: number;
  /** Query + Execute messages on all its sessions (pool, page client, lease session), per second */
  db_statements_per_s: number;
  /** of those, simple-protocol Query messages: the lease session's (the pool and the page client use the extended protocol) */
  lease_statements_per_s: number;
  /** the most sessions it held at once during the window */
  db_connections_max: number;
  operator_requests_per_s: number;
}

/** The fleet's idle cost over the window. */
export interface FleetIdle {
  seconds: number;
  replicas: ReplicaIdle[];
  /** every replica's requests to the operator host together (one host: what the operator sees) */
  operator: RequestRate;
  /** per feed, all replicas together: CPU % of a core, statements/s, requests/s */
  per_feed: { cpu_pct: number; db_statements_per_s: number; operator_requests_per_s: number };
}

const statementsOf = (replica: Replica) => replica.statements.simpleQueries + replica.statements.executes;

/** Measures `seconds` of the replicas running caught up; samples RSS and sessions once a second. */
export async function measureFleetIdle(
  sql: postgres.Sql,
  replicas: readonly Replica[],
  feeds: number,
  seconds: number,
): Promise<FleetIdle> {
  const startCpu = await Promise.all(replicas.map((replica) => replica.cpuSeconds()));
  const startStatements = replicas.map(statementsOf);
  const startLease = replicas.map((replica) => replica.statements.simpleQueries);
  const from = performance.now();
  const rssMax = replicas.map(() => 0);
  const connectionsMax = replicas.map(() => 0);
  while (performance.now() - from < seconds * 1000) {
    await sleep(Math.min(1000, from + seconds * 1000 - performance.now()));
    const [rss, connections] = await Promise.all([Promise.all(replicas.map((replica) => replica.rssMb())), readConnections(sql, replicas)]);
    replicas.forEach((replica, i) => {
      if (!replica.running())
        throw new BenchProcessError(`replica ${replica.label} exited while idle; stderr tail:\n${replica.child.stderrTail()}`);
      rssMax[i] = Math.max(rssMax[i] ?? 0, rss[i] ?? 0);
      connectionsMax[i] = Math.max(connectionsMax[i] ?? 0, connections[i] ?? 0);
    });
  }
  const to = performance.now();
  const endCpu = await Promise.all(replicas.map((replica) => replica.cpuSeconds()));
  const elapsed = (to - from) / 1000;
  const perReplica = replicas.map((replica, i): ReplicaIdle => {
    const cpu = (endCpu[i] ?? Number.NaN) - (startCpu[i] ?? Number.NaN);
    return {
      cpu_pct: (100 * cpu) / elapsed,
      rss_mb_max: rssMax[i] ?? Number.NaN,
      db_statements_per_s: (statementsOf(replica) - (startStatements[i] ?? 0)) / elapsed,
      lease_statements_per_s: (replica.statements.simpleQueries - (startLease[i] ?? 0)) / elapsed,
      db_connections_max: connectionsMax[i] ?? 0,
      operator_requests_per_s: requestRate(replica.requestTimes, from, to).mean_per_s,
    };
  });
  const operator = requestRate(
    replicas.flatMap((replica) => replica.requestTimes),
    from,
    to,
  );
  const sum = (pick: (r: ReplicaIdle) => number) => perReplica.reduce((total, r) => total + pick(r), 0);
  return {
    seconds: elapsed,
    replicas: perReplica,
    operator,
    per_feed: {
      cpu_pct: sum((r) => r.cpu_pct) / feeds,
      db_statements_per_s: sum((r) => r.db_statements_per_s) / feeds,
      operator_requests_per_s: operator.mean_per_s / feeds,
    },
  };
}

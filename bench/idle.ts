import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { DAEMON_NODE_FLAGS } from '../src/daemon/daemon-node-flags.js';
import { BenchProcessError } from './bench-process-error.js';
import { startDelayProxy } from './delay-proxy.js';
import { pgMessageCounter, type PgMessageCounts } from './pg-message-counter.js';
import { spawnNode } from './processes.js';
import { readMemory } from './rss.js';
import type { SandboxProcess } from './sandbox-process.js';

/** A caught-up daemon's cost per poll. */
export interface IdleResult {
  poll_interval_ms: number;
  polls: number;
  seconds: number;
  /** user + system CPU of the daemon process (every thread) over the window */
  cpu_seconds: number;
  /** CPU over the window as a share of one core, at this poll interval */
  cpu_pct: number;
  /** the same CPU per poll, as a share of one core at the 5 s default poll interval */
  cpu_pct_per_5s_poll: number;
  rss_mb_start: number;
  rss_mb_end: number;
  rss_mb_max: number;
  /** Query + Execute messages on every connection of the daemon (pool, page client, lease), per poll */
  db_statements_per_poll: number;
  db_simple_queries: number;
  db_executes: number;
}

// clock ticks per second of /proc/<pid>/stat utime and stime (USER_HZ: 100 on every Linux this runs on)
const USER_HZ = 100;
/** Polls let pass before the window opens: connections made, statements prepared, code warmed up. */
const WARMUP_POLLS = 5;

/** utime + stime of a process (all its threads), in seconds, from /proc/<pid>/stat. */
async function cpuSeconds(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8');
  // the command name (field 2) may hold spaces: count fields after its closing parenthesis
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
}

/**
 * Runs the compiled daemon (`intake-sync run`, the daemon's V8 flags, POLL_INTERVAL_MS = pollIntervalMs) on an
 * empty feed with every connection going through counting proxies: the operator's side counts polls (one
 * request each), the database's side counts statements. After WARMUP_POLLS, the window lasts `polls` polls;
 * CPU comes from /proc/<pid>/stat and RSS is sampled every poll.
 */
export async function measureIdle(
  cliEntry: string,
  sandbox: SandboxProcess,
  databaseUrl: string,
  polls: number,
  pollIntervalMs: number,
  /** the V8 flags the daemon is started with: the daemon's own, or none (a plain start, which relaunches itself with them) */
  nodeFlags: readonly string[] = DAEMON_NODE_FLAGS,
): Promise<IdleResult> {
  const counts: PgMessageCounts = { simpleQueries: 0, executes: 0 };
  const database = new URL(databaseUrl);
  const dbProxy = await startDelayProxy(Number(database.port || 5432), 0, () => pgMessageCounter(counts));
  const operator = await startDelayProxy(Number(new URL(sandbox.baseUrl).port), 0);
  const viaDbProxy = new URL(databaseUrl);
  viaDbProxy.hostname = '127.0.0.1';
  viaDbProxy.port = String(dbProxy.port);
  const viaOperatorProxy = new URL(sandbox.baseUrl);
  viaOperatorProxy.port = String(operator.port);
  const daemon = spawnNode('daemon (idle)', [...nodeFlags, cliEntry, 'run'], {
    ...process.env,
    DATABASE_URL: viaDbProxy.toString(),
    INTAKE_API_BASE_URL: viaOperatorProxy.toString().replace(/\/$/, ''),
    INTAKE_API_KEY: sandbox.key,
    INTAKE_API_SECRET: sandbox.secret,
    POLL_INTERVAL_MS: String(pollIntervalMs),
    HEALTH_PORT: '0',
    LOG_LEVEL: 'warn',
  });
  let exited = false;
  void daemon.exited.then(() => (exited = true));
  try {
    const pollsSoFar = () => operator.stats().exchanges;
    const waitForPolls = async (target: number) => {
      const deadline = performance.now() + (target - pollsSoFar()) * pollIntervalMs * 2 + 30_000;
      while (pollsSoFar() < target) {
        if (exited || performance.now() > deadline) {
          throw new BenchProcessError(
            `idle: the daemon made ${pollsSoFar()} polls, the bench waited for ${target}; stderr tail:\n${daemon.stderrTail()}`,
          );
        }
        await sleep(20);
      }
    };
    // an exchange is counted when the next request starts: poll k+1 beginning closes poll k
    await waitForPolls(WARMUP_POLLS + 1);
    const start = { polls: pollsSoFar(), cpu: await cpuSeconds(daemon.pid), at: performance.now(), ...counts };
    const rss: number[] = [];
    const sampler = setInterval(() => {
      void readMemory(daemon.pid).then((m) => m && rss.push(m.rssKb / 1024));
    }, pollIntervalMs);
    try {
      await waitForPolls(start.polls + polls);
    } finally {
      clearInterval(sampler);
    }
    const end = { polls: pollsSoFar(), cpu: await cpuSeconds(daemon.pid), at: performance.now(), ...counts };
    const done = end.polls - start.polls;
    const cpu = end.cpu - start.cpu;
    const seconds = (end.at - start.at) / 1000;
    const statements = end.simpleQueries - start.simpleQueries + end.executes - start.executes;
    return {
      poll_interval_ms: pollIntervalMs,
      polls: done,
      seconds,
      cpu_seconds: cpu,
      cpu_pct: (100 * cpu) / seconds,
      cpu_pct_per_5s_poll: (100 * cpu) / (done * 5),
      rss_mb_start: rss[0] ?? Number.NaN,
      rss_mb_end: rss[rss.length - 1] ?? Number.NaN,
      rss_mb_max: Math.max(...rss),
      db_statements_per_poll: statements / done,
      db_simple_queries: end.simpleQueries - start.simpleQueries,
      db_executes: end.executes - start.executes,
    };
  } finally {
    await daemon.stop();
    await Promise.all([dbProxy.close(), operator.close()]);
  }
}

import type { OutputCapture } from './capture.js';
import { PROCESS_START_BUDGET_MS, runCli, spawnCli, type CliChild, type CliResult } from './cli-process.js';
import { FatalProbeError } from '../fatal-probe-error.js';
import { freePort } from './free-port.js';
import { getHealth, type HealthAnswer } from './health.js';
import type { ApiAccess } from './sandbox-process.js';
import { waitFor } from '../wait-for.js';

export interface WorkerSetup {
  api: ApiAccess;
  databaseUrl: string;
  capture: OutputCapture;
  /** extra or overriding env (POLL_INTERVAL_MS, HTTP_TIMEOUT_MS, ...) */
  env?: Record<string, string>;
}

/**
 * The environment every scenario's worker runs with: debug logs (the PHI and
 * secret canaries must hold at the most verbose level) and short intervals.
 */
export function workerEnv(setup: WorkerSetup, healthPort: number): Record<string, string> {
  return {
    INTAKE_API_BASE_URL: setup.api.baseUrl,
    INTAKE_API_KEY: setup.api.key,
    INTAKE_API_SECRET: setup.api.secret,
    DATABASE_URL: setup.databaseUrl,
    HEALTH_PORT: String(healthPort),
    HEALTH_HOST: '127.0.0.1',
    LOG_LEVEL: 'debug',
    POLL_INTERVAL_MS: '200',
    HTTP_TIMEOUT_MS: '3000',
    // the product's default is 10 s. With 5 s, scenario 3 once exited 1 in CI on PostgreSQL 14, 5 s later
    // than the same run on 18: most likely the grace ran out while the shutdown's statements (lease
    // release, the pool's close) waited on a disk another matrix leg's suite kept busy. A hung shutdown
    // still fails: it exits 1 at the grace, before stopWorker's SIGKILL
    SHUTDOWN_GRACE_MS: '15000',
    // a restarted worker takes the lease at once; a standby notices a free lease quickly
    LEASE_RETRY_MS: '250',
    // bounded backoff kept short so faulty runs finish in seconds, not minutes
    POLL_BACKOFF_MAX_MS: '2000',
    // run --once must outlast the injected faults rather than give up
    ONCE_MAX_FAILURES: '10000',
    PROGRESS_LOG_INTERVAL_MS: '1000',
    ...setup.env,
  };
}

/** A running `intake-sync run` daemon. */
export interface WorkerProcess {
  child: CliChild;
  healthPort: number;
  label: string;
  health(path: '/healthz' | '/readyz' | '/metrics', timeoutMs?: number): Promise<HealthAnswer>;
}

let workerCount = 0;

/** Starts `intake-sync run` on its own health port (no wait: see waitUntilLive). */
export async function startWorker(setup: WorkerSetup, args: string[] = []): Promise<WorkerProcess> {
  const healthPort = await freePort();
  const label = `worker-${++workerCount}`;
  const child = spawnCli(['run', ...args], { label, capture: setup.capture, env: workerEnv(setup, healthPort) });
  return {
    child,
    healthPort,
    label,
    health: (path, timeoutMs) => getHealth(healthPort, path, setup.capture, label, timeoutMs),
  };
}

/** Waits until the worker's /healthz answers 200; fails at once if it exits. */
export async function waitUntilLive(worker: WorkerProcess, timeoutMs = PROCESS_START_BUDGET_MS): Promise<void> {
  await waitFor(
    async () => {
      if (!worker.child.isRunning()) {
        throw new FatalProbeError(`${worker.label} exited while starting; stderr tail: ${worker.child.stderr().slice(-1500)}`);
      }
      return (await worker.health('/healthz', 1_000)).status === 200;
    },
    { what: `${worker.label} /healthz to answer 200`, timeoutMs, intervalMs: 100, probeErrors: 'retry' },
  );
}

/** For probes: stops a wait at once, with the stderr tail, when the worker has died. */
export function assertRunning(worker: WorkerProcess): void {
  if (!worker.child.isRunning()) {
    throw new FatalProbeError(`${worker.label} died; stderr tail: ${worker.child.stderr().slice(-1500)}`);
  }
}

/** SIGTERMs a worker and waits for it to exit; SIGKILL past the deadline. */
export async function stopWorker(worker: WorkerProcess, timeoutMs = 25_000): Promise<void> {
  worker.child.signal('SIGCONT');
  worker.child.signal('SIGTERM');
  const timer = setTimeout(() => worker.child.signal('SIGKILL'), timeoutMs);
  await worker.child.exited;
  clearTimeout(timer);
}

/**
 * What a worker said last, for the message of an exit code that was not 0 (a grace that ran out, an
 * error). The scenarios' data is synthetic, and the same output is scanned for leaks when the run passes.
 */
export function exitReport(worker: WorkerProcess): string {
  return `${worker.label} exited; stdout tail: ${worker.child.stdout().slice(-3000)}; stderr tail: ${worker.child.stderr().slice(-1500)}`;
}

/** `intake-sync run --once`: drains until done and exits. */
export async function runOnce(setup: WorkerSetup, timeoutMs = 120_000): Promise<CliResult> {
  const healthPort = await freePort();
  return runCli(['run', '--once'], {
    label: `once-${++workerCount}`,
    capture: setup.capture,
    env: workerEnv(setup, healthPort),
    stdoutKind: 'log',
    timeoutMs,
  });
}

/** Any other CLI command against the worker's database and API. */
export async function runCommand(setup: WorkerSetup, args: string[], timeoutMs = PROCESS_START_BUDGET_MS): Promise<CliResult> {
  return runCli(args, {
    label: `cli-${args.slice(0, 2).join('-')}-${++workerCount}`,
    capture: setup.capture,
    env: workerEnv(setup, 0),
    timeoutMs,
  });
}

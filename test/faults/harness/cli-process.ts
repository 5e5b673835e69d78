import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CaptureKind, OutputCapture } from './capture.js';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * The CLI as installed: the compiled dist/ (global-setup builds it fresh before the suite).
 * A tsx start costs ~2 s of a 2-core machine; the suite starts about a hundred processes.
 */
const CLI_PREFIX = ['dist/cli/main.js'];

/**
 * The budget for a process of ours to start (the sandbox's handshake, a worker's first /healthz) or
 * for one short CLI command: about 1 s on an idle 2-core machine, past 30 s on one shared by a team
 * (load average 30, issue 23). Generous, because a scenario proves outcomes, never start-up speed;
 * the timings scenarios do measure (takeover, SIGTERM) keep their own figures.
 */
export const PROCESS_START_BUDGET_MS = 90_000;

/** Variables of the test runner's own environment that must not reach the children. */
const INHERITED_BLOCKLIST =
  /^(INTAKE_|DATABASE_URL$|DATA_DIR$|HEALTH_|POLL_|PAGE_LIMIT$|HTTP_TIMEOUT|FEED_NAME$|LOG_LEVEL$|READY_|SHUTDOWN_|SANDBOX_|VITEST|NODE_OPTIONS$)/;

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Date.now() when the exit was observed */
  at: number;
}

export interface CliChild {
  readonly pid: number;
  readonly label: string;
  readonly exited: Promise<ExitInfo>;
  isRunning(): boolean;
  stdout(): string;
  stderr(): string;
  signal(signal: NodeJS.Signals): void;
}

export interface SpawnOptions {
  label: string;
  capture: OutputCapture;
  env?: Record<string, string>;
  /** how stdout is classified for the leak scan: daemons log there, commands print results */
  stdoutKind?: CaptureKind;
  /** written to stdin, which is then closed */
  input?: string;
}

const live = new Set<CliChild>();

/** Starts `intake-sync <args>` with a clean environment plus `env`, capturing stdout and stderr. */
export function spawnCli(args: string[], options: SpawnOptions): CliChild {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !INHERITED_BLOCKLIST.test(k)) env[k] = v;
  Object.assign(env, options.env);
  const proc = spawn(process.execPath, [...CLI_PREFIX, ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (proc.pid === undefined) throw new Error(`could not spawn intake-sync ${args.join(' ')}`);
  const out: string[] = [];
  const err: string[] = [];
  proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out.push(chunk);
    options.capture.add(`${options.label}:stdout`, options.stdoutKind ?? 'log', chunk);
  });
  proc.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err.push(chunk);
    options.capture.add(`${options.label}:stderr`, 'log', chunk);
  });
  proc.stdin.end(options.input ?? '');
  let running = true;
  const exited = new Promise<ExitInfo>((resolve) => {
    // 'close' (not 'exit') so every captured byte is in before anyone reads the output
    proc.on('close', (code, signal) => {
      running = false;
      live.delete(child);
      resolve({ code, signal, at: Date.now() });
    });
  });
  const child: CliChild = {
    pid: proc.pid,
    label: options.label,
    exited,
    isRunning: () => running,
    stdout: () => out.join(''),
    stderr: () => err.join(''),
    signal: (signal) => {
      if (running) process.kill(proc.pid as number, signal);
    },
  };
  live.add(child);
  return child;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
}

/** Runs a command to completion; SIGKILLs it and throws past the deadline. */
export async function runCli(args: string[], options: SpawnOptions & { timeoutMs: number }): Promise<CliResult> {
  const started = Date.now();
  const child = spawnCli(args, { stdoutKind: 'output', ...options });
  const timer = setTimeout(() => child.signal('SIGKILL'), options.timeoutMs);
  const exit = await child.exited;
  clearTimeout(timer);
  const durationMs = exit.at - started;
  if (exit.signal === 'SIGKILL' && durationMs >= options.timeoutMs) {
    throw new Error(
      `intake-sync ${args.join(' ')} did not finish within ${options.timeoutMs} ms; stderr tail: ${child.stderr().slice(-2000)}`,
    );
  }
  return { code: exit.code, signal: exit.signal, stdout: child.stdout(), stderr: child.stderr(), durationMs };
}

/** SIGKILLs every child this test process started and still runs (afterAll safety net). */
export async function killAllChildren(): Promise<void> {
  const children = [...live];
  for (const child of children) {
    // a SIGSTOPped child must be continued for the kill to be reaped promptly
    child.signal('SIGCONT');
    child.signal('SIGKILL');
  }
  await Promise.all(children.map((c) => c.exited));
}

import { fileURLToPath } from 'node:url';
import { runChild, spawnChild, type ExitInfo } from '../child-process.js';
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

export type { ExitInfo } from '../child-process.js';
export { killAllChildren } from '../child-process.js';

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

/** Starts `intake-sync <args>` with a clean environment plus `env`, capturing stdout and stderr. */
export function spawnCli(args: string[], options: SpawnOptions): CliChild {
  const child = spawnChild(process.execPath, [...CLI_PREFIX, ...args], {
    cwd: REPO_ROOT,
    env: cliEnvironment(options.env),
    ...(options.input === undefined ? {} : { input: options.input }),
    onStdout: (chunk) => options.capture.add(`${options.label}:stdout`, options.stdoutKind ?? 'log', chunk),
    onStderr: (chunk) => options.capture.add(`${options.label}:stderr`, 'log', chunk),
  });
  return { ...child, label: options.label };
}

/** The runner's environment without what must not reach the children, plus `extra`. */
function cliEnvironment(extra: Record<string, string> | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !INHERITED_BLOCKLIST.test(k)) env[k] = v;
  return Object.assign(env, extra);
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
  const result = await runChild(process.execPath, [...CLI_PREFIX, ...args], {
    cwd: REPO_ROOT,
    env: cliEnvironment(options.env),
    timeoutMs: options.timeoutMs,
    ...(options.input === undefined ? {} : { input: options.input }),
    onStdout: (chunk) => options.capture.add(`${options.label}:stdout`, options.stdoutKind ?? 'output', chunk),
    onStderr: (chunk) => options.capture.add(`${options.label}:stderr`, 'log', chunk),
  });
  if (result.timedOut) {
    throw new Error(
      `intake-sync ${args.join(' ')} did not finish within ${options.timeoutMs} ms; stderr tail: ${result.stderr.slice(-2000)}`,
    );
  }
  const { timedOut: _timedOut, ...rest } = result;
  return rest;
}

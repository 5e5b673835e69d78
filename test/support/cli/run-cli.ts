import { fileURLToPath } from 'node:url';
import { runChild } from '../child-process.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The budget of one CLI command run as a process (tsx compiling the CLI, connecting, its work): runCli
 * kills a command past it. One takes 2-5 s on an idle 2-core machine, 5-10 s at load average 5, and
 * past 30 s on one shared by a team (load average 25, issue 23): generous, because what a test proves
 * is the command's outcome, not its speed. A test running several gives each its own (cliBudget),
 * never one figure for the whole list.
 */
export const CLI_COMMAND_BUDGET_MS = 60_000;

/** A test's timeout when it runs `commands` CLI processes one after another (plus `extraMs` for its other waits). */
export function cliBudget(commands: number, extraMs = 0): number {
  return commands * CLI_COMMAND_BUDGET_MS + extraMs;
}

/**
 * Runs `intake-sync ARGS` as its own process (TypeScript via tsx) with only the
 * given INTAKE_* variables, so the developer's environment cannot leak in.
 */
export function runCli(args: readonly string[], env: Record<string, string>, as: { uid?: number } = {}): Promise<CliResult> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('INTAKE_') && !key.startsWith('HTTP_TIMEOUT')),
  );
  return runChild(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: REPO_ROOT,
    env: { ...inherited, LOG_LEVEL: 'warn', ...env } as Record<string, string>,
    timeoutMs: CLI_COMMAND_BUDGET_MS,
    ...as,
  }).then(({ code, stdout, stderr, timedOut }) => ({
    // killed by a signal counts as a failure (1), as a shell would not report 0
    code: code ?? 1,
    stdout,
    stderr: stderr + (timedOut ? `\n(killed: past its budget of ${CLI_COMMAND_BUDGET_MS} ms)` : ''),
  }));
}

import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { spawnChild } from '../child-process.js';

const REPO = fileURLToPath(new URL('../../..', import.meta.url));

/** A `node --import tsx src/cli/main.ts ...` child with its output collected. */
export interface WorkerProcess {
  child: ChildProcess;
  stdout(): string;
  /** stderr split into parsed JSON log lines (non-JSON lines are kept as { raw }) */
  logs(): Array<Record<string, unknown>>;
  /** resolves with the exit code (or the signal name) */
  exited: Promise<number | NodeJS.Signals>;
}

/** Starts the CLI as a separate process with `env` on top of a minimal environment. */
export function spawnCli(args: string[], env: Record<string, string>): WorkerProcess {
  const started = spawnChild(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: REPO,
    // no inherited INTAKE_* / DATABASE_URL from the developer's shell
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'info', ...env },
  });
  return {
    child: started.process,
    stdout: started.stdout,
    logs: () =>
      started
        .stderr()
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => {
          try {
            return JSON.parse(line) as Record<string, unknown>;
          } catch {
            return { raw: line };
          }
        }),
    exited: started.exited.then(({ code, signal }) => code ?? signal ?? -1),
  };
}

/**
 * Stops the CLI processes a test started (by pid, SIGKILL for those still running: tsx runs in the node
 * process itself, so there are no grandchildren) and empties the list.
 */
export async function stopProcesses(children: WorkerProcess[]): Promise<void> {
  for (const child of children.splice(0)) {
    if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    await child.exited;
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { recordChild } from './test-run.js';

/** How a child ended. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Date.now() when the exit was observed */
  at: number;
}

export interface ChildOptions {
  cwd: string;
  /** the child's whole environment (nothing of the test runner's is added) */
  env: Record<string, string>;
  /** written to stdin, which is then closed (closed empty when undefined) */
  input?: string;
  onStdout?(chunk: string): void;
  onStderr?(chunk: string): void;
  /** false: output only reaches onStdout/onStderr, stdout()/stderr() stay empty (a bench's long-running child) */
  keepOutput?: boolean;
  /** run as this uid (a container's arbitrary uid with no passwd entry, say); needs a root test runner */
  uid?: number;
}

/** A child process of a test, its output collected. */
export interface Child {
  readonly process: ChildProcess;
  readonly pid: number;
  /** resolves on 'close' (not 'exit'), so every byte of output is in before anyone reads it */
  readonly exited: Promise<ExitInfo>;
  isRunning(): boolean;
  stdout(): string;
  stderr(): string;
  /** signals the child itself (a SIGSTOP of one worker, say), never its group */
  signal(signal: NodeJS.Signals): void;
}

const live = new Set<Child>();

/**
 * The one way tests and benches start a process: in its own process group, so killAllChildren takes whatever it
 * started too, and tracked until it closes.
 */
export function spawnChild(command: string, args: readonly string[], options: ChildOptions): Child {
  const proc = spawn(command, [...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    ...(options.uid === undefined ? {} : { uid: options.uid }),
  });
  if (proc.pid === undefined) throw new Error(`could not spawn ${command} ${args.join(' ')}`);
  const pid = proc.pid;
  // the run's teardown ends this child's group if the test that started it cannot (Ctrl-C)
  const forget = recordChild(pid);
  const out: string[] = [];
  const err: string[] = [];
  proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    if (options.keepOutput !== false) out.push(chunk);
    options.onStdout?.(chunk);
  });
  proc.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    if (options.keepOutput !== false) err.push(chunk);
    options.onStderr?.(chunk);
  });
  // a child that exits before reading its input closes the pipe: not the test's failure
  proc.stdin.on('error', () => {});
  proc.stdin.end(options.input ?? '');
  let running = true;
  const exited = new Promise<ExitInfo>((resolve) => {
    proc.on('close', (code, signal) => {
      running = false;
      forget();
      live.delete(child);
      resolve({ code, signal, at: Date.now() });
    });
  });
  const child: Child = {
    process: proc,
    pid,
    exited,
    isRunning: () => running,
    stdout: () => out.join(''),
    stderr: () => err.join(''),
    signal: (signal) => {
      if (running) process.kill(pid, signal);
    },
  };
  live.add(child);
  return child;
}

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
  /** SIGKILLed past its budget */
  timedOut: boolean;
}

/** Runs a process to its end; SIGKILLs it (and its group) past `timeoutMs`. */
export async function runChild(
  command: string,
  args: readonly string[],
  options: ChildOptions & { timeoutMs: number },
): Promise<ChildResult> {
  const started = Date.now();
  const child = spawnChild(command, args, options);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child, 'SIGKILL');
  }, options.timeoutMs);
  const exit = await child.exited;
  clearTimeout(timer);
  return {
    code: exit.code,
    signal: exit.signal,
    stdout: child.stdout(),
    stderr: child.stderr(),
    durationMs: exit.at - started,
    timedOut,
  };
}

/** SIGKILLs every child this test process started and that still runs, with its process group (afterAll safety net). */
export async function killAllChildren(): Promise<void> {
  const children = [...live];
  for (const child of children) {
    // a SIGSTOPped child must be continued for the kill to be reaped promptly
    killGroup(child, 'SIGCONT');
    killGroup(child, 'SIGKILL');
  }
  await Promise.all(children.map((c) => c.exited));
}

function killGroup(child: Child, signal: NodeJS.Signals): void {
  if (!child.isRunning()) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already (its leader exited between the check and the kill)
  }
}

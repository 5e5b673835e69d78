import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
// the one spawner of tests and benches (its own process group, tracked until it closes)
import { killAllChildren as killAllSpawned, spawnChild } from '../test/support/child-process.js';
import { BenchProcessError } from './bench-process-error.js';

/** Repository root (bench/ sits directly under it). */
export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** How much of a failed child's stderr goes into the error. */
const STDERR_TAIL_CHARS = 2_000;

/** A child process the bench started, killed on bench exit whatever happens. */
export interface BenchChild {
  pid: number;
  /** the last STDERR_TAIL_CHARS of its stderr so far */
  stderrTail(): string;
  /** First stdout line that parses as a JSON object (rejects if the child exits first). */
  firstJsonLine: Promise<Record<string, unknown>>;
  /** Last stdout line that parsed as a JSON object, once the child has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; lastJson: Record<string, unknown> | undefined }>;
  /** every stdout line so far that parsed as a JSON object, in order (`run --once --json` prints one per feed) */
  jsonLines(): Array<Record<string, unknown>>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the child is gone. */
  stop(graceMs?: number): Promise<void>;
}

/** Runs a TypeScript entry point of this repo as `node --import tsx FILE ...args`. */
export function spawnTsx(label: string, file: string, args: readonly string[], env: NodeJS.ProcessEnv): BenchChild {
  return spawnNode(label, ['--import', 'tsx', file, ...args], env);
}

/**
 * Runs `node ...nodeArgs` in the repo root through the shared spawner. No npx or shell wrapper: the pid
 * is the program itself, so its /proc/<pid>/status is its own memory.
 */
export function spawnNode(label: string, nodeArgs: readonly string[], env: NodeJS.ProcessEnv): BenchChild {
  let stderrTail = '';
  const child = spawnChild(process.execPath, nodeArgs, {
    cwd: REPO_ROOT,
    env: definedOnly(env),
    // a bench child may log for minutes: keep the tail, not the whole output
    keepOutput: false,
    onStderr: (chunk) => {
      stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    },
  });
  let lastJson: Record<string, unknown> | undefined;
  const jsonLines: Array<Record<string, unknown>> = [];
  let resolveFirst: (value: Record<string, unknown>) => void = () => {};
  const firstJsonLine = new Promise<Record<string, unknown>>((resolve) => (resolveFirst = resolve));
  createInterface({ input: child.process.stdout! }).on('line', (line) => {
    const parsed = parseJsonObject(line);
    if (!parsed) return;
    if (!lastJson) resolveFirst(parsed);
    lastJson = parsed;
    jsonLines.push(parsed);
  });
  const exited = child.exited.then(({ code, signal }) => ({ code, signal, lastJson }));
  const failIfExitsFirst = exited.then(({ code, signal }) => {
    throw new BenchProcessError(
      `${label} exited (code ${code}, signal ${signal}) before printing its JSON line; stderr tail:\n${stderrTail}`,
    );
  });
  const firstOrFailure = Promise.race([firstJsonLine, failIfExitsFirst]);
  // only callers that wait for a JSON line care that none came: not an unhandled rejection for the rest
  firstOrFailure.catch(() => {});
  return {
    pid: child.pid,
    stderrTail: () => stderrTail,
    firstJsonLine: firstOrFailure,
    exited,
    jsonLines: () => [...jsonLines],
    async stop(graceMs = 10_000) {
      if (!child.isRunning()) return;
      child.signal('SIGTERM');
      const timer = setTimeout(() => child.signal('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Throws a BenchProcessError unless the child exited 0; returns its last JSON line. */
export async function expectCleanExit(label: string, bench: BenchChild): Promise<Record<string, unknown>> {
  const { code, signal, lastJson } = await bench.exited;
  if (code !== 0 || !lastJson) {
    throw new BenchProcessError(
      `${label} exited with code ${code}, signal ${signal}${lastJson ? '' : ', no JSON summary'}; stderr tail:\n${bench.stderrTail()}`,
    );
  }
  return lastJson;
}

/**
 * SIGKILLs every child still running, with its process group: the last line of defence on error, signal
 * or exit. The signals go out before it returns, so an 'exit' handler (which cannot wait) may call it.
 */
export function killAllChildren(): void {
  void killAllSpawned();
}

/** process.env without its unset names (the shared spawner takes the child's whole environment as strings). */
export function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

function parseJsonObject(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// What one `npm test` run creates is found again by its run id: test databases are named
// `t_<run>_...`, test roles carry the comment `intake-sync test run <run>`, and every process the
// spawner starts leaves its pid in `<tmpdir>/intake-sync-test-<run>/pids/` until it closes. The
// global teardown (test/support/global-setup.ts) ends and drops them, after Ctrl-C too.

/** The variable the global setup sets for the run's workers. */
export const TEST_RUN_VARIABLE = 'INTAKE_SYNC_TEST_RUN';

/** This run's id (lower-case hex), or undefined outside a vitest run started with the global setup. */
export function testRunId(): string | undefined {
  const id = process.env[TEST_RUN_VARIABLE];
  return id && /^[0-9a-f]{8}$/.test(id) ? id : undefined;
}

/** The comment a test role carries: how the teardown finds it. */
export function runComment(id: string): string {
  return `intake-sync-test-run ${id}`;
}

/** The run's scratch directory (pids of live children). */
export function runDirectory(id: string): string {
  return join(tmpdir(), `intake-sync-test-${id}`);
}

/** The prefix of this run's test database names (`t_` alone outside a run). */
export function databasePrefix(): string {
  const id = testRunId();
  return id ? `t_${id}_` : 't_';
}

/** Marks a role (or database) as this run's, so the teardown drops it if its test could not. */
export function tagForRun(kind: 'role' | 'database', name: string): string | undefined {
  const id = testRunId();
  return id ? `comment on ${kind} "${name}" is '${runComment(id)}'` : undefined;
}

/** Records a live child's pid for the teardown; returns the function that forgets it. */
export function recordChild(pid: number): () => void {
  const id = testRunId();
  if (!id) return () => {};
  const dir = join(runDirectory(id), 'pids');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, String(pid));
  writeFileSync(file, '');
  return () => rmSync(file, { force: true });
}

/** tagForRun's statement for a role, or a no-op outside a run: one line to follow each `create role` of a test. */
export function roleTagStatement(name: string): string {
  return tagForRun('role', name) ?? 'select 1';
}

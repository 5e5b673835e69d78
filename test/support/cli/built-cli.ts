import { join } from 'node:path';
import { expect } from 'vitest';
import { runChild } from '../child-process.js';

const REPO = join(import.meta.dirname, '../../..');

/** The CLI as a user runs it: the build in dist/ (ensureBuilt first). */
export const BUILT_CLI = join(REPO, 'dist/cli/main.js');

/** A beforeAll's budget for ensureBuilt: tsc on a loaded 2-core machine. */
export const BUILD_BUDGET_MS = 300_000;

/** Builds dist/ when a source file is newer (scripts/build-if-stale.mjs): a test of the built CLI never runs a stale one. */
export async function ensureBuilt(): Promise<void> {
  const build = await runChild(process.execPath, ['scripts/build-if-stale.mjs'], {
    cwd: REPO,
    env: { ...process.env } as Record<string, string>,
    timeoutMs: BUILD_BUDGET_MS,
  });
  expect(build.code, build.stderr).toBe(0);
}

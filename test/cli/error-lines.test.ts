import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envSchema } from '../../src/config/config.js';
import { killAllChildren, runChild } from '../support/child-process.js';
import { CLI_COMMAND_BUDGET_MS } from '../support/cli/run-cli.js';
import { BUILD_BUDGET_MS, BUILT_CLI, ensureBuilt } from '../support/cli/built-cli.js';
import { COMMAND_CASES, type ErrorCase, SHAPE_CASES, VARIABLE_CASES } from '../support/cli/error-cases.js';

// Every error a newcomer meets, through the built CLI as a real process with nothing of this
// shell's environment: exactly the lines (one per problem, `intake-sync: ` first) and the exit code.

const REPO = join(import.meta.dirname, '../..');
const scratch = mkdtempSync(join(tmpdir(), 'intake-sync-errors-'));

async function run(c: ErrorCase): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const dir = mkdtempSync(join(scratch, 'case-'));
  if (c.file) writeFileSync(join(dir, c.file.name), c.file.text);
  const env = { PATH: process.env.PATH ?? '', HOME: dir, DATA_DIR: join(dir, 'data'), ...c.env };
  const args = c.args.map((a) => a.replace('CASE_DIR', dir));
  const result = await runChild(process.execPath, [BUILT_CLI, ...args], { cwd: REPO, env, timeoutMs: CLI_COMMAND_BUDGET_MS });
  return { code: result.code, stdout: result.stdout, stderr: result.stderr.replaceAll(dir, 'CASE_DIR') };
}

function expectCase(c: ErrorCase, result: { code: number | null; stderr: string; stdout: string }): void {
  expect(result.stderr).toBe(c.lines.map((line) => `intake-sync: ${line}\n`).join(''));
  expect(result.code).toBe(c.code);
  expect(result.stdout).toBe('');
}

// the built CLI is what a user runs
beforeAll(ensureBuilt, BUILD_BUDGET_MS);

afterAll(async () => {
  await killAllChildren();
  rmSync(scratch, { recursive: true, force: true });
});

describe('every configuration variable has a case', () => {
  it('the table names each variable of the schema, and no other', () => {
    expect(Object.keys(VARIABLE_CASES).sort()).toEqual(Object.keys(envSchema.shape).sort());
  });
});

describe.concurrent('a bad configuration variable: one line naming it, exit 2 (1 for a database not reached)', () => {
  it.each(Object.values(VARIABLE_CASES).map((c) => [c.label, c] as const))(
    '%s',
    async (_label, c) => {
      expectCase(c, await run(c));
    },
    CLI_COMMAND_BUDGET_MS * 2,
  );
});

describe.concurrent('the shape of the lines', () => {
  it.each(SHAPE_CASES.map((c) => [c.label, c] as const))(
    '%s',
    async (_label, c) => {
      expectCase(c, await run(c));
    },
    CLI_COMMAND_BUDGET_MS * 2,
  );
});

describe.concurrent("each command's bad input", () => {
  it.each(COMMAND_CASES.map((c) => [c.label, c] as const))(
    '%s',
    async (_label, c) => {
      expectCase(c, await run(c));
    },
    CLI_COMMAND_BUDGET_MS * 2,
  );
});

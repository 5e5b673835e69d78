import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEnvFile } from '../../src/config/env-file.js';
import { killAllChildren, runChild } from '../support/child-process.js';
import { CLI_COMMAND_BUDGET_MS, cliBudget } from '../support/cli/run-cli.js';
import { BUILD_BUDGET_MS, BUILT_CLI, ensureBuilt } from '../support/cli/built-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'intake-sync-env-file-'));

beforeAll(ensureBuilt, BUILD_BUDGET_MS);
afterAll(async () => {
  await killAllChildren();
  rmSync(dir, { recursive: true, force: true });
});

describe('.env in the working directory', () => {
  it('sets what the environment does not, keeps what it does, and names both (never values)', () => {
    const here = mkdtempSync(join(dir, 'unit-'));
    writeFileSync(join(here, '.env'), '# a comment\nPOLL_INTERVAL_MS=100\nFEED_NAME="from-file"\nINTAKE_API_SECRET=s3cret\n');
    const env: NodeJS.ProcessEnv = { FEED_NAME: 'real' };
    const read = readEnvFile(here, env);
    expect(env).toEqual({ FEED_NAME: 'real', POLL_INTERVAL_MS: '100', INTAKE_API_SECRET: 's3cret' });
    expect(read).toEqual({ path: join(here, '.env'), taken: ['INTAKE_API_SECRET', 'POLL_INTERVAL_MS'], overridden: ['FEED_NAME'] });
    expect(JSON.stringify(read)).not.toContain('s3cret');
  });

  it('without a file nothing happens', () => {
    const env: NodeJS.ProcessEnv = {};
    expect(readEnvFile(mkdtempSync(join(dir, 'none-')), env)).toBeUndefined();
    expect(env).toEqual({});
  });

  it(
    'the CLI reads it at start, and the real environment wins',
    async () => {
      const here = mkdtempSync(join(dir, 'cli-'));
      writeFileSync(join(here, '.env'), 'DATA_DIR=/nonexistent/from-dotenv\n');
      const cli = BUILT_CLI;
      const base = { PATH: process.env.PATH ?? '', HOME: here };
      const fromFile = await runChild(process.execPath, [cli, 'status'], { cwd: here, env: base, timeoutMs: CLI_COMMAND_BUDGET_MS });
      expect(fromFile.stderr).toContain('no embedded store in DATA_DIR /nonexistent/from-dotenv');
      const real = await runChild(process.execPath, [cli, 'status'], {
        cwd: here,
        env: { ...base, DATA_DIR: '/nonexistent/real' },
        timeoutMs: CLI_COMMAND_BUDGET_MS,
      });
      expect(real.stderr).toContain('no embedded store in DATA_DIR /nonexistent/real');
    },
    cliBudget(2),
  );
});

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_URL, NEEDS_POSTGRES, postgresReachable } from '../support/db.js';
import { killAllChildren, spawnChild } from '../support/child-process.js';
import { runDirectory, TEST_RUN_VARIABLE } from '../support/test-run.js';
import { waitFor } from '../support/wait-for.js';

// `npm test` interrupted (Ctrl-C) mid-test leaves nothing behind: a vitest on one small fixture file
// (test/support/interrupted-run.test.ts) is sent SIGINT, as a terminal sends it to its process group,
// while the fixture holds a database, a role and a process of its own group; afterwards none of them
// remains, nor the run's scratch directory.

const reachable = await postgresReachable();
const REPO = join(import.meta.dirname, '../..');
const scratch = mkdtempSync(join(tmpdir(), 'intake-sync-teardown-'));

afterAll(async () => {
  await killAllChildren();
  rmSync(scratch, { recursive: true, force: true });
});

/** Whether the process runs: a killed one not yet reaped by whoever inherited it (a zombie) does not. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe.skipIf(!reachable)(`an interrupted test run (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  it('ends its processes and drops its databases and roles', async () => {
    const readyFile = join(scratch, 'ready.json');
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== TEST_RUN_VARIABLE)) as Record<string, string>;
    const vitest = spawnChild(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', 'test/support/interrupted-run.test.ts'], {
      cwd: REPO,
      env: { ...env, INTAKE_SYNC_INTERRUPT_READY: readyFile, CI: '1' },
    });
    await waitFor(() => existsSync(readyFile) && readFileSync(readyFile, 'utf8').length > 0, {
      timeoutMs: 180_000,
      what: 'the fixture holding a database, a role and a process',
    });
    const held = JSON.parse(readFileSync(readyFile, 'utf8')) as { run: string; database: string; role: string; pid: number };
    expect(held.database.startsWith(`t_${held.run}_`)).toBe(true);
    expect(alive(held.pid)).toBe(true);

    // Ctrl-C: the terminal signals the foreground process group (vitest and its workers, not the fixture's child)
    process.kill(-vitest.pid, 'SIGINT');
    await vitest.exited;

    // the run's watchdog cleans up once vitest is gone, however it went
    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    try {
      await waitFor(
        async () => {
          const databases = await admin`select 1 from pg_database where datname = ${held.database}`;
          const roles = await admin`select 1 from pg_roles where rolname = ${held.role}`;
          return databases.length === 0 && roles.length === 0 && !alive(held.pid) && !existsSync(runDirectory(held.run));
        },
        { timeoutMs: 120_000, what: "the interrupted run's database, role, process and scratch directory to be gone", intervalMs: 250 },
      );
    } finally {
      await admin.end({ timeout: 5 });
    }
  }, 300_000);
});

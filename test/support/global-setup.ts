import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { runComment, runDirectory, TEST_RUN_VARIABLE, testRunId } from './test-run.js';

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * `npm test`'s global setup: the run's id (vitest.config.ts draws it, so the reporter and every worker
 * see the same one), and its teardown, which vitest runs when the run ends or is interrupted (Ctrl-C):
 * it ends every process the run's tests still have running (their whole process groups) and drops the
 * databases and roles the run created. KEEP_TEST_DB=1 keeps the databases and roles for inspection.
 */
export default function setup(): () => Promise<void> {
  const id = testRunId() ?? randomBytes(4).toString('hex');
  process.env[TEST_RUN_VARIABLE] = id;
  // Ctrl-C can end vitest without its teardown (and a signal death runs no exit hook): a watchdog in a
  // process group of its own waits for this process to end, then removes what is left of the run
  const watchdog = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'clean-up-run.ts'), id, String(process.pid)], {
    cwd: join(import.meta.dirname, '../..'),
    detached: true,
    stdio: 'ignore',
  });
  watchdog.unref();
  return async () => {
    await cleanUpRun(id);
  };
}

/** Ends the run's leftover processes, then drops its databases and roles (found by the run id). */
export async function cleanUpRun(id: string): Promise<{ processes: number; databases: string[]; roles: string[] }> {
  const processes = endChildren(id);
  const { databases, roles } = process.env.KEEP_TEST_DB ? { databases: [], roles: [] } : await dropDatabaseObjects(id);
  rmSync(runDirectory(id), { recursive: true, force: true });
  return { processes, databases, roles };
}

function endChildren(id: string): number {
  const dir = join(runDirectory(id), 'pids');
  if (!existsSync(dir)) return 0;
  let ended = 0;
  for (const name of readdirSync(dir)) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 1) continue;
    for (const signal of ['SIGCONT', 'SIGKILL'] as const) {
      try {
        // the spawner starts each child as the leader of its own process group: its children go too
        process.kill(-pid, signal);
        if (signal === 'SIGKILL') ended += 1;
      } catch {
        // already gone
      }
    }
  }
  return ended;
}

async function dropDatabaseObjects(id: string): Promise<{ databases: string[]; roles: string[] }> {
  const admin = postgres(ADMIN_URL, { max: 1, connect_timeout: 5, onnotice: () => {} });
  try {
    const databases = (
      await admin<{ name: string }[]>`select datname as name from pg_database where starts_with(datname, ${`t_${id}_`})`
    ).map((row) => row.name);
    for (const name of databases) await admin.unsafe(`drop database if exists "${name}" with (force)`);
    const roles = (
      await admin<{ name: string }[]>`select r.rolname as name from pg_roles r
        join pg_shdescription d on d.objoid = r.oid and d.classoid = 'pg_authid'::regclass
        where d.description = ${runComment(id)}`
    ).map((row) => row.name);
    for (const name of roles) {
      // a role that still owns objects somewhere is not ours to take apart: it stays, and is reported
      await admin.unsafe(`drop role if exists "${name}"`).catch(() => {});
    }
    return { databases, roles };
  } catch {
    // no server (the PGlite fallback): nothing was created there
    return { databases: [], roles: [] };
  } finally {
    await admin.end({ timeout: 5 }).catch(() => {});
  }
}

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_URL,
  createEmptyDatabase,
  createTestDatabase,
  NEEDS_POSTGRES,
  postgresReachable,
  type EmptyDatabase,
  type TestDatabase,
} from '../support/db.js';
import { runCli } from '../support/cli/run-cli.js';
import { roleTagStatement } from '../support/test-run.js';

const reachable = await postgresReachable();

/** Pipes `script` into `psql -X -q -v ON_ERROR_STOP=1 URL` (as the docs say to) and resolves with its exit code and output. */
function psql(url: string, script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', url], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(script);
  });
}

describe.skipIf(!reachable)(`grants | psql (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let empty: EmptyDatabase;
  let tdb: TestDatabase;
  let owner: postgres.Sql;
  const role = `grants_psql_${randomBytes(3).toString('hex')}`;
  const gone = `grants_gone_${randomBytes(3).toString('hex')}`;
  beforeAll(async () => {
    // a database where the schema was never migrated: the first GRANT is refused
    empty = await createEmptyDatabase('grants_psql');
    // a migrated one, feed default registered (as migrate does)
    tdb = await createTestDatabase('grants_psql_m');
    owner = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
    await owner.unsafe(`create role "${role}"`);
    await owner.unsafe(roleTagStatement(role));
  }, 60_000);
  afterAll(async () => {
    await owner?.end({ timeout: 1 });
    await tdb?.drop();
    await empty?.drop();
    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop role if exists "${role}"`).catch(() => {});
    await admin.unsafe(`drop role if exists "${gone}"`).catch(() => {});
    await admin.end({ timeout: 1 });
  });

  const recorded = async (name: string) =>
    (await owner.unsafe<{ feed: string }[]>(`select feed from intake_sync.feed_access where role_name = $1 order by feed`, [name])).map(
      (r) => r.feed,
    );

  it('stops at the first refused statement and exits non-zero, with one error and no "transaction is aborted" wall', async () => {
    const grants = await runCli(['grants', '--role', 'runtime', '--to', 'postgres'], {});
    expect(grants.code).toBe(0);
    const result = await psql(empty.url, grants.stdout);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('schema "intake_sync" does not exist');
    expect(result.stderr).not.toContain('current transaction is aborted');
  });

  it('runs cleanly through psql -q -v ON_ERROR_STOP=1: nothing on stdout or stderr, exit 0 (issue 35 §5)', async () => {
    for (const args of [
      ['--role', 'app', '--to', role, '--feed', 'default'],
      ['--role', 'app', '--to', role, '--all-feeds'],
      ['--role', 'runtime', '--to', role],
    ]) {
      const grants = await runCli(['grants', ...args], {});
      expect(grants.stderr).toBe('');
      const result = await psql(tdb.url ?? '', grants.stdout);
      expect({ args, ...result }).toEqual({ args, code: 0, stdout: '', stderr: '' });
    }
  }, 60_000);

  it('a --feed the database never saw is refused naming the known feeds, nothing changed; --new-feed records it', async () => {
    await psql(tdb.url ?? '', (await runCli(['grants', '--role', 'app', '--to', role, '--feed', 'default'], {})).stdout);
    const typo = await psql(tdb.url ?? '', (await runCli(['grants', '--role', 'app', '--to', role, '--feed', 'defualt'], {})).stdout);
    expect(typo.code).not.toBe(0);
    expect(typo.stderr).toContain(
      'ERROR:  --feed defualt: this database has never seen that feed (known: default); check the name, or add --new-feed if it is a feed not yet run',
    );
    expect(await recorded(role)).toEqual(['default']);
    const intended = await psql(
      tdb.url ?? '',
      (await runCli(['grants', '--role', 'app', '--to', role, '--feed', 'north', '--new-feed'], {})).stdout,
    );
    expect(intended).toMatchObject({ code: 0, stderr: '' });
    expect(await recorded(role)).toEqual(['north']);
  }, 60_000);

  it("meets a dropped role's records and removes them, audited; a re-created role of that name starts with none", async () => {
    await owner.unsafe(`create role "${gone}"`);
    await owner.unsafe(roleTagStatement(gone));
    await psql(tdb.url ?? '', (await runCli(['grants', '--role', 'app', '--to', gone, '--feed', 'default'], {})).stdout);
    expect(await recorded(gone)).toEqual(['default']);
    await owner.unsafe(`drop owned by "${gone}"`);
    await owner.unsafe(`drop role "${gone}"`);
    expect(await recorded(gone)).toEqual(['default']);
    // any grants run cleans it
    const other = await psql(tdb.url ?? '', (await runCli(['grants', '--role', 'app', '--to', role, '--all-feeds'], {})).stdout);
    expect(other).toMatchObject({ code: 0, stderr: '' });
    expect(await recorded(gone)).toEqual([]);
    const [audit] = await owner.unsafe<{ subject: string; detail: { feeds: string[] } }[]>(
      `select subject, detail from intake_sync.audit_entries where action = 'role.forget' and subject = $1`,
      [gone],
    );
    expect(audit).toMatchObject({ subject: gone, detail: { feeds: ['default'] } });
  }, 60_000);
});

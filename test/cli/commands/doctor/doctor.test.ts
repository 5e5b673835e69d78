import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../../../src/db/connection.js';
import { type Sandbox, startSandbox } from '../../../../src/sandbox/server.js';
import {
  createEmptyDatabase,
  createTestDatabase,
  type EmptyDatabase,
  NEEDS_POSTGRES,
  postgresReachable,
  type TestDatabase,
} from '../../../support/db.js';
import { runCli } from '../../../support/cli/run-cli.js';
import { roleTagStatement } from '../../../support/test-run.js';

const hasPostgres = await postgresReachable();

describe.skipIf(!hasPostgres)('intake-sync doctor', () => {
  let sandbox: Sandbox;
  let tdb: TestDatabase;
  let empty: EmptyDatabase;
  let env: Record<string, string>;
  const role = `doctor_${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    sandbox = await startSandbox({});
    tdb = await createTestDatabase('doctor');
    empty = await createEmptyDatabase('doctor_empty');
    await empty.sql.unsafe(`create role "${role}" login`);
    await empty.sql.unsafe(roleTagStatement(role));
    const [credential] = sandbox.credentials;
    env = {
      DATABASE_URL: tdb.url ?? '',
      INTAKE_API_BASE_URL: sandbox.baseUrl,
      INTAKE_API_KEY: credential?.key ?? '',
      INTAKE_API_SECRET: credential?.secret ?? '',
    };
  }, 60_000);
  afterAll(async () => {
    await sandbox?.close();
    await tdb?.drop();
    await empty?.sql.unsafe(`drop role if exists "${role}"`).catch(() => {});
    await empty?.drop();
  });

  it('all checks pass: one line per check, exit 0; --json says the same', async () => {
    const text = await runCli(['doctor'], env);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    const lines = text.stdout.trim().split('\n');
    expect(lines.map((l) => l.split(/\s{2,}/)[1])).toEqual([
      'configuration',
      'database',
      'schema',
      'grants',
      'lease',
      'connections',
      'feed records',
      'operator default',
    ]);
    expect(lines.every((l) => l.startsWith('ok'))).toBe(true);
    expect(text.stdout).toMatch(/database\s+127\.0\.0\.1:5432 database t_(\w+_)?doctor_\w+, no TLS, direct/);
    expect(text.stdout).toMatch(/credentials accepted \(GET \/events answered/);
    // issue 33 §3: the worst case, the daemon's and the console's connections against max_connections
    expect(text.stdout).toMatch(
      /connections\s+worst case 16 of max_connections \d+ \(\d+ reserved\): each daemon process 6 \(pool 4, page 1, lease 1\), the console 10 \(CONSOLE_MAX_CONNECTIONS\); room for \d+ daemon process\(es\) beside one console/,
    );
    const json = await runCli(['doctor', '--json'], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, version: '0.2.0' });
    // nothing in the output is a secret
    expect(text.stdout + json.stdout).not.toContain(env.INTAKE_API_SECRET);
  }, 60_000);

  it('wrong credentials: the operator check fails (exit 1), the others pass', async () => {
    const result = await runCli(['doctor', '--json'], { ...env, INTAKE_API_SECRET: 'not-the-secret' });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { ok: boolean; checks: Array<{ check: string; ok: boolean; detail: string }> };
    expect(report.ok).toBe(false);
    expect(report.checks.filter((c) => !c.ok).map((c) => c.check)).toEqual(['operator default']);
    expect(report.checks.at(-1)?.detail).toMatch(/401/);
    expect(result.stdout).not.toContain('not-the-secret');
  }, 60_000);

  it('an unmigrated database: schema fails and doctor migrates nothing; a role without grants: grants fails naming them', async () => {
    const unmigrated = await runCli(['doctor'], { ...env, DATABASE_URL: empty.url });
    expect(unmigrated.code).toBe(1);
    expect(unmigrated.stdout).toMatch(/^FAIL\s+schema\s+no intake-sync schema "intake_sync" yet: run `intake-sync migrate`/m);
    const [schema] = await empty.sql<
      { present: boolean }[]
    >`select exists (select 1 from pg_namespace where nspname = 'intake_sync') as present`;
    expect(schema?.present).toBe(false);

    const asRole = new URL(tdb.url ?? '');
    asRole.username = role;
    const unprivileged = await runCli(['doctor'], { ...env, DATABASE_URL: asRole.toString() });
    expect(unprivileged.code).toBe(1);
    expect(unprivileged.stdout).toMatch(
      new RegExp(
        `^FAIL\\s+grants\\s+this command needs the runtime role, and the database role ${role} holds no grant in schema intake_sync`,
        'm',
      ),
    );
    expect(unprivileged.stdout).toContain('lacks');
    expect(unprivileged.stdout).toContain('USAGE on schema intake_sync');
  }, 60_000);

  it("a dropped role's feed records: doctor finds them (and removes nothing), migrate removes them, audited", async () => {
    const gone = `doctor_gone_${randomBytes(3).toString('hex')}`;
    const owner = tdb.database.db;
    await queryRows(owner, sql.raw(`create role "${gone}"`));
    await queryRows(owner, sql.raw(roleTagStatement(gone)));
    await queryRows(
      owner,
      sql.raw(`insert into intake_sync.feed_access (role, role_name, feed) values ('"${gone}"'::regrole, '${gone}', 'default')`),
    );
    await queryRows(owner, sql.raw(`drop role "${gone}"`));
    const found = await runCli(['doctor', '--json'], env);
    const report = JSON.parse(found.stdout) as { checks: Array<{ check: string; ok: boolean; detail: string }> };
    const records = report.checks.find((c) => c.check === 'feed records');
    expect(records?.ok).toBe(false);
    expect(records?.detail).toMatch(
      new RegExp(`feed records of dropped roles: ${gone} \\(dropped, oid \\d+: default\\).*intake-sync migrate`),
    );
    const [kept] = await queryRows<{ n: number }>(
      owner,
      sql.raw(`select count(*)::int as n from intake_sync.feed_access where role_name = '${gone}'`),
    );
    expect(kept?.n).toBe(1);

    const migrated = await runCli(['migrate'], env);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toContain(`removed the feed records of dropped roles: ${gone} (dropped, oid`);
    const [left] = await queryRows<{ n: number }>(
      owner,
      sql.raw(`select count(*)::int as n from intake_sync.feed_access where role_name = '${gone}'`),
    );
    expect(left?.n).toBe(0);
    const audit = await queryRows<{ subject: string; detail: { feeds: string[] } }>(
      owner,
      sql.raw(`select subject, detail from intake_sync.audit_entries where action = 'role.forget'`),
    );
    expect(audit).toEqual([{ subject: gone, detail: expect.objectContaining({ feeds: ['default'] }) }]);
    const again = await runCli(['doctor', '--json'], env);
    expect((JSON.parse(again.stdout) as typeof report).checks.find((c) => c.check === 'feed records')?.ok).toBe(true);
  }, 60_000);

  it('an unreachable database names DATABASE_URL and the host; an unknown --feed is a usage error (exit 2)', async () => {
    const down = await runCli(['doctor'], { ...env, DATABASE_URL: 'postgres://postgres:pw@127.0.0.1:5499/x' });
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(/^FAIL\s+database\s+cannot reach the database at 127\.0\.0\.1:5499 \(DATABASE_URL\): connection refused/m);
    expect(down.stdout).not.toContain(':pw@');
    const unknown = await runCli(['doctor', '--feed', 'north'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--feed: "north" is not a configured feed/);
  }, 60_000);

  it('checks nothing it should not: the store is unchanged (no checkpoint created, no event read into it)', async () => {
    const db = tdb.database.db;
    // the test database registers feed default (as migrate does): doctor moved no position and read no event in
    const moved = await queryRows<{ n: number }>(
      db,
      sql`select count(*)::int as n from ${tdb.database.names.feedCheckpoints} where iterator is not null or version > 0`,
    );
    expect(moved[0]?.n).toBe(0);
    const events = await queryRows<{ n: number }>(db, sql`select count(*)::int as n from ${tdb.database.names.events}`);
    expect(events[0]?.n).toBe(0);
  });
});

describe.skipIf(hasPostgres)('intake-sync doctor', () => {
  it.skip(NEEDS_POSTGRES, () => {});
});

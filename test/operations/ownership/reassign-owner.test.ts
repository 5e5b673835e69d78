import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { grantStatements } from '../../../src/db/grants.js';
import { runCli } from '../../support/cli/run-cli.js';
import { useLoginRoles } from '../../support/login-roles.js';
import { createEmptyDatabase, NEEDS_POSTGRES, postgresReachable, urlAs, type EmptyDatabase } from '../../support/db.js';

// Issue 27 §1: an install made as the superuser is handed to the owner role with
// `migrate --reassign-to ROLE` (one transaction, audited), after which the owner migrates and the
// runtime role's grants still hold. With real roles on the real server, the CLI as its own process.

const reachable = await postgresReachable();
const suffix = randomBytes(3).toString('hex');
const ROLES = {
  owner: `ra_owner_${suffix}`,
  runtime: `ra_runtime_${suffix}`,
  bystander: `ra_bystander_${suffix}`,
  third: `ra_third_${suffix}`,
};

/** Objects of the schema (relations, routines, types) and the schema itself not owned by `role`. */
const notOwnedBy = (db: EmptyDatabase, role: string) =>
  db.sql<{ n: number }[]>`
    select ((select count(*) from pg_class where relnamespace = 'intake_sync'::regnamespace and relowner <> ${role}::regrole)
      + (select count(*) from pg_proc where pronamespace = 'intake_sync'::regnamespace and proowner <> ${role}::regrole)
      + (select count(*) from pg_type where typnamespace = 'intake_sync'::regnamespace and typowner <> ${role}::regrole)
      + (select count(*) from pg_namespace where nspname = 'intake_sync' and nspowner <> ${role}::regrole))::int as n`.then(
    (rows) => rows[0]?.n,
  );

describe.skipIf(!reachable)(`migrate --reassign-to (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, { timeout: 120_000 }, () => {
  const roles = useLoginRoles(Object.values(ROLES));
  let empty: EmptyDatabase | undefined;
  afterEach(async () => {
    await empty?.drop();
    empty = undefined;
  });

  /** A database installed as the superuser (as getting-started's first steps did), the runtime role granted by it. */
  async function superuserInstall(label: string): Promise<EmptyDatabase> {
    empty = await createEmptyDatabase(label);
    const name = new URL(empty.url).pathname.slice(1);
    await roles.admin().unsafe(`grant create on database "${name}" to "${ROLES.owner}"`);
    const installed = await runCli(['migrate'], { DATABASE_URL: empty.url });
    expect(installed.code, installed.stderr).toBe(0);
    await empty.sql.unsafe(grantStatements('runtime', 'intake_sync', ROLES.runtime).join('\n'));
    return empty;
  }

  it('hands the schema and every object to the owner, audited; the owner then migrates and the runtime grants hold', async () => {
    const db = await superuserInstall('reassign_ok');
    const refused = await runCli(['migrate'], { DATABASE_URL: urlAs(db.url, ROLES.owner) });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`it is owned by role postgres, not by the connected role ${ROLES.owner}`);
    expect(refused.stderr).toContain(`\`intake-sync migrate --reassign-to ${ROLES.owner}\``);
    expect(await notOwnedBy(db, 'postgres')).toBe(0);

    const handed = await runCli(['migrate', '--reassign-to', ROLES.owner], { DATABASE_URL: db.url });
    expect(handed.code, handed.stderr).toBe(0);
    expect(handed.stdout).toMatch(new RegExp(`^schema "intake_sync" and \\d+ objects in it handed from postgres to ${ROLES.owner}`));
    expect(await notOwnedBy(db, ROLES.owner)).toBe(0);
    const audit = await db.sql`select actor, subject, detail from intake_sync.audit_log where action = 'schema.reassign_owner'`;
    expect(audit).toEqual([
      {
        actor: expect.stringMatching(/^postgres/),
        subject: 'intake_sync',
        detail: { from: 'postgres', to: ROLES.owner, objects: expect.any(Number) },
      },
    ]);
    expect(audit[0]?.detail.objects).toBeGreaterThan(50);

    const migrated = await runCli(['migrate'], { DATABASE_URL: urlAs(db.url, ROLES.owner) });
    expect(migrated.code, migrated.stderr).toBe(0);
    // the grants the superuser gave now come from the owner: the runtime role still reads and calls
    const runtime = postgres(urlAs(db.url, ROLES.runtime), { max: 1, onnotice: () => {}, fetch_types: false });
    try {
      expect(await runtime`select count(*)::int as n from intake_sync.quarantine_open`).toEqual([{ n: 0 }]);
      const [grantor] = await db.sql`select distinct grantor::regrole::text as grantor from information_schema.role_table_grants
        where table_schema = 'intake_sync' and grantee = ${ROLES.runtime}`;
      expect(grantor).toEqual({ grantor: ROLES.owner });
    } finally {
      await runtime.end({ timeout: 1 });
    }
    // again: nothing left to hand over, still audited and exit 0
    const again = await runCli(['migrate', '--reassign-to', ROLES.owner], { DATABASE_URL: db.url });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`and 0 objects in it handed from ${ROLES.owner} to ${ROLES.owner}`);
  });

  it('refuses, changing nothing: an unknown role (exit 2), a role without the right (exit 1), an object of a third role', async () => {
    const db = await superuserInstall('reassign_refused');
    const unknown = await runCli(['migrate', '--reassign-to', `nobody_${suffix}`], { DATABASE_URL: db.url });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`--reassign-to: role nobody_${suffix} does not exist`);
    const bad = await runCli(['migrate', '--reassign-to', 'x"; drop schema intake_sync; --'], { DATABASE_URL: db.url });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--reassign-to: a role name/);

    const bystander = await runCli(['migrate', '--reassign-to', ROLES.owner], { DATABASE_URL: urlAs(db.url, ROLES.bystander) });
    expect(bystander.code).toBe(1);
    expect(bystander.stderr).toContain(`role ${ROLES.bystander} may not hand schema "intake_sync" from postgres to ${ROLES.owner}`);
    expect(await notOwnedBy(db, 'postgres')).toBe(0);

    await db.sql.unsafe(`create function intake_sync.helper() returns int language sql as 'select 1'`);
    await db.sql.unsafe(`alter function intake_sync.helper() owner to "${ROLES.third}"`);
    const planted = await runCli(['migrate', '--reassign-to', ROLES.owner], { DATABASE_URL: db.url });
    expect(planted.code).toBe(1);
    expect(planted.stderr).toContain(`routine intake_sync.helper() (owned by ${ROLES.third})`);
    expect(await db.sql`select nspowner::regrole::text as owner from pg_namespace where nspname = 'intake_sync'`).toEqual([
      { owner: 'postgres' },
    ]);
    expect(await db.sql`select count(*)::int as n from intake_sync.audit_log where action = 'schema.reassign_owner'`).toEqual([{ n: 0 }]);
    await db.sql.unsafe('drop function intake_sync.helper()');
  });
});

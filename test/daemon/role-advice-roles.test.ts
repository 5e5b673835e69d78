import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantStatements } from '../../src/db/grants.js';
import { ADMIN_URL, createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase, urlAs } from '../support/db.js';
import { runCli } from '../support/cli/run-cli.js';
import { roleTagStatement } from '../support/test-run.js';

const reachable = await postgresReachable();
const suffix = randomBytes(3).toString('hex');
/** Roles are cluster-wide: unique names, dropped at the end. */
const ROLES = { app: `ra_app_${suffix}`, nobody: `ra_nobody_${suffix}`, partial: `ra_partial_${suffix}` };

describe.skipIf(!reachable)(`errors that keep least privilege, as real roles (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let tdb: TestDatabase;
  let admin: postgres.Sql;

  beforeAll(async () => {
    tdb = await createTestDatabase('role_advice');
    admin = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
    for (const role of Object.values(ROLES)) {
      await admin.unsafe(`create role "${role}" login`);
      await admin.unsafe(roleTagStatement(role));
    }
    await admin.unsafe(grantStatements('app', 'intake_sync', ROLES.app).join('\n'));
    // a runtime role an upgrade left one table grant short of
    await admin.unsafe(grantStatements('runtime', 'intake_sync', ROLES.partial).join('\n'));
    await admin.unsafe(`revoke insert on intake_sync.quarantine from "${ROLES.partial}"`);
  });
  afterAll(async () => {
    await admin?.end({ timeout: 1 });
    await tdb?.drop();
    const cluster = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    for (const role of Object.values(ROLES)) await cluster.unsafe(`drop role if exists "${role}"`).catch(() => {});
    await cluster.end({ timeout: 1 });
  });

  it('an app role running an operator command is told it needs the runtime role, never to take runtime grants', async () => {
    const result = await runCli(['prescriptions', 'list'], { DATABASE_URL: urlAs(tdb.url ?? '', ROLES.app), MIGRATE_ON_START: 'false' });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`this command needs the runtime role, and the database role ${ROLES.app} looks like an app role`);
    expect(result.stderr).not.toContain('grants --role runtime');
  }, 60_000);

  it('a role with no grant at all is told it is neither runtime nor app, and how a role meant to be the runtime role gets its grants', async () => {
    const result = await runCli(['prescriptions', 'list'], { DATABASE_URL: urlAs(tdb.url ?? '', ROLES.nobody), MIGRATE_ON_START: 'false' });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`the database role ${ROLES.nobody} holds no grant in schema intake_sync`);
    expect(result.stderr).toContain(`if ${ROLES.nobody} is meant to be the runtime role`);
  }, 60_000);

  it('a runtime role missing a grant is told which one and the grants command that restores it', async () => {
    const result = await runCli(['prescriptions', 'list'], {
      DATABASE_URL: urlAs(tdb.url ?? '', ROLES.partial),
      MIGRATE_ON_START: 'false',
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('looks like the runtime role but lacks 1 grant(s) the daemon needs: INSERT on intake_sync.quarantine.');
    expect(result.stderr).toContain(`intake-sync grants --role runtime --to ${ROLES.partial}`);
  }, 60_000);
});

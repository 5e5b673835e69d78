import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantStatements } from '../../src/db/grants.js';
import { createEmptyDatabase, NEEDS_POSTGRES, postgresReachable, urlAs, type EmptyDatabase } from '../support/db.js';
import { useLoginRoles } from '../support/login-roles.js';
import { cliBudget, runCli } from '../support/cli/run-cli.js';

// `migrate` run by a role that does not own the schema names the owner as the one to run it, never
// hands the schema to the caller: as the runtime role, an app role and the superuser, against an
// install the owner role made. Real roles on the real server, the CLI as its own process.

const reachable = await postgresReachable();
const suffix = randomBytes(3).toString('hex');
const ROLES = { owner: `ma_owner_${suffix}`, runtime: `ma_runtime_${suffix}`, app: `ma_app_${suffix}` };

describe.skipIf(!reachable)(`migrate as a role that does not own the schema (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  const roles = useLoginRoles(Object.values(ROLES));
  let db: EmptyDatabase;

  beforeAll(
    async () => {
      db = await createEmptyDatabase('migrate_advice');
      const name = new URL(db.url).pathname.slice(1);
      await roles.admin().unsafe(`grant create on database "${name}" to "${ROLES.owner}"`);
      const installed = await runCli(['migrate'], { DATABASE_URL: urlAs(db.url, ROLES.owner) });
      expect(installed.code, installed.stderr).toBe(0);
      const owner = (await import('postgres')).default(urlAs(db.url, ROLES.owner), { max: 1, onnotice: () => {} });
      await owner.unsafe(grantStatements('runtime', 'intake_sync', ROLES.runtime).join('\n'));
      await owner.unsafe(grantStatements('app', 'intake_sync', ROLES.app).join('\n'));
      await owner.end({ timeout: 5 });
    },
    cliBudget(1, 30_000),
  );
  afterAll(async () => {
    await db?.drop();
  });

  it.each([
    ['the runtime role', () => ROLES.runtime],
    ['an app role', () => ROLES.app],
    ['the superuser', () => 'postgres'],
  ])(
    '%s is told to run it as the owner role, never to take the schema',
    async (_label, role) => {
      const caller = role();
      const result = await runCli(['migrate'], { DATABASE_URL: urlAs(db.url, caller) });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `intake-sync: refusing to migrate schema "intake_sync": it is owned by role ${ROLES.owner}, not by the connected role ${caller}. ` +
          `migrate runs as the schema's owner: run it with DATABASE_URL naming role ${ROLES.owner} (docs/security.md "Roles and grants")\n`,
      );
      expect(result.stderr).not.toContain('--reassign-to');
    },
    cliBudget(1),
  );
});

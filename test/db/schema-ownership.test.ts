import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmptyDatabase, NEEDS_POSTGRES, postgresReachable, type EmptyDatabase, urlAs } from '../support/db.js';
import { runCli } from '../support/cli/run-cli.js';
import { useLoginRoles } from '../support/login-roles.js';

// Issue 17 §2, the attack: a role with CREATE on the database pre-creates `intake_sync` (and a helper
// in it); `migrate` used to adopt it with `create schema if not exists`, and every SECURITY DEFINER
// function would then call the attacker's code as the owner. With real roles.

const reachable = await postgresReachable();
const suffix = randomBytes(3).toString('hex');
const ROLES = { owner: `so_owner_${suffix}`, attacker: `so_attacker_${suffix}`, bystander: `so_bystander_${suffix}` };

describe.skipIf(!reachable)(`migrate and a schema it does not own (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  const roles = useLoginRoles(Object.values(ROLES));
  let empty: EmptyDatabase | undefined;
  afterEach(async () => {
    await empty?.drop();
    empty = undefined;
  });

  async function database(label: string): Promise<EmptyDatabase> {
    empty = await createEmptyDatabase(label);
    const name = new URL(empty.url).pathname.slice(1);
    for (const role of [ROLES.owner, ROLES.attacker]) await roles.admin().unsafe(`grant create on database "${name}" to "${role}"`);
    return empty;
  }

  const migrateAs = (db: EmptyDatabase, role: string) => runCli(['migrate'], { DATABASE_URL: urlAs(db.url, role) });

  it('a schema pre-created by another role is refused, naming the role, and nothing is installed in it', async () => {
    const db = await database('own_precreated');
    const attacker = postgres(urlAs(db.url, ROLES.attacker), { max: 1, onnotice: () => {}, fetch_types: false });
    try {
      await attacker.unsafe('create schema intake_sync');
      await attacker.unsafe(`create function intake_sync._feed_visible(feed text) returns boolean language sql as 'select true'`);
    } finally {
      await attacker.end({ timeout: 1 });
    }
    for (const role of [ROLES.owner, 'postgres']) {
      const result = await migrateAs(db, role);
      expect(result.code, result.stderr).not.toBe(0);
      expect(result.stderr).toContain(`refusing to migrate schema "intake_sync": it is owned by role ${ROLES.attacker}`);
    }
    expect(await db.sql`select count(*)::int as n from pg_class where relnamespace = 'intake_sync'::regnamespace`).toEqual([{ n: 0 }]);
  });

  it('an owned schema holding an object of another role is refused, naming the object and its owner', async () => {
    const db = await database('own_planted');
    expect((await migrateAs(db, ROLES.owner)).code).toBe(0);
    // planted later, by someone who could (a superuser mistake, a grant since revoked)
    await db.sql.unsafe(`create function intake_sync.helper() returns int language sql as 'select 1'`);
    await db.sql.unsafe(`alter function intake_sync.helper() owner to "${ROLES.attacker}"`);
    const result = await migrateAs(db, ROLES.owner);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`holds objects owned by another role: function helper() (owned by ${ROLES.attacker})`);
  });

  it('migrate revokes CREATE on the schema from PUBLIC (a schema created earlier by the owner, opened to all)', async () => {
    const db = await database('own_revoke');
    const owner = postgres(urlAs(db.url, ROLES.owner), { max: 1, onnotice: () => {}, fetch_types: false });
    try {
      await owner.unsafe('create schema intake_sync');
      await owner.unsafe('grant create on schema intake_sync to public');
    } finally {
      await owner.end({ timeout: 1 });
    }
    const creatable = () =>
      db.sql`select has_schema_privilege(${ROLES.bystander}, 'intake_sync', 'CREATE') as ok`.then((rows) => rows[0]?.ok);
    expect(await creatable()).toBe(true);
    const result = await migrateAs(db, ROLES.owner);
    expect(result.code, result.stderr).toBe(0);
    expect(await creatable()).toBe(false);
    // and again on a current schema: migrate checks and revokes every time it runs
    await db.sql.unsafe(`grant create on schema intake_sync to public`);
    expect((await migrateAs(db, ROLES.owner)).code).toBe(0);
    expect(await creatable()).toBe(false);
  });
});

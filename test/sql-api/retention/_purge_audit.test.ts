import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { recordOwnerSettings } from '../../../src/db/owner-settings.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { plainSql, type PlainSql } from '../../support/sql-api/plain-sql.js';
import { loginAs, type RoleSession } from '../../support/sql-api/roles.js';

// The audit is append-only for everyone but the owner (issue 25, item 5): _purge_audit's cutoff is never
// younger than the owner's RETAIN_AUDIT (owner_settings, written by migrate), whatever its caller asks,
// and every purge that deleted rows audits itself.

const realServer = await postgresReachable();
const DAY = 86_400_000;
let tdb: TestDatabase;
let owner: PlainSql;
let runtime: RoleSession;
let app: RoleSession;

beforeAll(async () => {
  if (!realServer) return;
  tdb = await createTestDatabase('sql_api_purge_audit');
  owner = plainSql(tdb);
  runtime = await loginAs(tdb, owner, 'runtime', 'purge_runtime');
  app = await loginAs(tdb, owner, 'app', 'purge_app');
});
afterAll(async () => {
  if (!realServer) return;
  await Promise.all([runtime.close(), app.close()]);
  await owner.close();
  await tdb.drop();
});
beforeEach(async () => {
  if (!realServer) return;
  await owner.query('truncate intake_sync.audit_entries');
  await owner.query('truncate intake_sync.owner_settings');
  // as the owner: rows of the trail 40 days, 2 years and 7 years old
  await owner.query(`insert into intake_sync.audit_entries (actor, action, feed, subject, "at") values
    ('vendor_app', 'prescription.register', null, 'young', now() - interval '40 days'),
    ('vendor_app', 'prescription.register', null, 'middle', now() - interval '2 years'),
    ('vendor_app', 'prescription.register', null, 'old', now() - interval '7 years')`);
});

const subjects = async () =>
  (
    await owner.query<{ subject: string }>(
      `select subject from intake_sync.audit_entries where action = 'prescription.register' order by subject`,
    )
  ).map((r) => r.subject);
const purgeRows = async () =>
  owner.query<{ actor: string; detail: Record<string, unknown> }>(
    `select actor, detail from intake_sync.audit_entries where action = 'audit.purge' order by id`,
  );

describe.skipIf(!realServer)(`_purge_audit as the runtime role (${NEEDS_POSTGRES})`, () => {
  test('asking for now() deletes nothing younger than the floor (the 6-year default before migrate recorded one)', async () => {
    const [row] = await runtime.sql`select intake_sync._purge_audit(null, now(), 100000) as n`;
    expect(Number(row?.n)).toBe(1);
    expect(await subjects()).toEqual(['middle', 'young']);
    const [purge] = await purgeRows();
    expect(purge?.actor).toBe(runtime.name);
    expect(purge?.detail).toMatchObject({ class: 'audit', count: 1 });
    // the cutoff applied is the floor, not the `before` asked for
    const cutoff = new Date(String(purge?.detail.cutoff)).getTime();
    expect(Date.now() - cutoff).toBeGreaterThan(5 * 365 * DAY);
  });

  test("the owner's RETAIN_AUDIT (recorded by migrate) is the floor: 1y deletes the 2-year row, never the 40-day one", async () => {
    await recordOwnerSettings(tdb.database.db, { retainAuditMs: 366 * DAY });
    const [row] = await runtime.sql`select intake_sync._purge_audit(null, now(), 100000) as n`;
    expect(Number(row?.n)).toBe(2);
    expect(await subjects()).toEqual(['young']);
  });

  test('forever: nothing is deleted, whatever the caller asks', async () => {
    await recordOwnerSettings(tdb.database.db, { retainAuditMs: null });
    const [row] = await runtime.sql`select intake_sync._purge_audit(null, now() + interval '100 years', 100000) as n`;
    expect(Number(row?.n)).toBe(0);
    expect(await subjects()).toEqual(['middle', 'old', 'young']);
    expect(await purgeRows()).toEqual([]);
  });

  test('the dry run counts with the same floor and writes nothing', async () => {
    const [row] = await runtime.sql`select intake_sync._purge_audit(null, now(), 1, true) as n`;
    expect(Number(row?.n)).toBe(1);
    expect(await subjects()).toEqual(['middle', 'old', 'young']);
    expect(await purgeRows()).toEqual([]);
  });

  test('neither the runtime role nor an application can move the floor or delete audit rows directly', async () => {
    for (const role of [runtime, app]) {
      await expect(role.sql`insert into intake_sync.owner_settings (name, value) values ('retain_audit_ms', '1')`).rejects.toMatchObject({
        code: '42501',
      });
      await expect(role.sql`update intake_sync.owner_settings set value = '1'`).rejects.toMatchObject({ code: '42501' });
      await expect(role.sql`delete from intake_sync.audit_entries`).rejects.toMatchObject({ code: '42501' });
    }
    // and an application may not purge at all
    await expect(app.sql`select intake_sync._purge_audit(null, now(), 10)`).rejects.toMatchObject({ code: '42501' });
    expect(await subjects()).toEqual(['middle', 'old', 'young']);
  });
});

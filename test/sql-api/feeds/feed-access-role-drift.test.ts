import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantsScript } from '../../../src/db/grants-script.js';
import { grantStatements } from '../../../src/db/grants.js';
import { identityOf, samplePrescription } from '../../../src/sandbox/fixtures.js';
import { NEEDS_POSTGRES, postgresReachable } from '../../support/db.js';
import { FEED_A, twoClinics, type TwoClinics } from '../../support/sql-api/two-clinics.js';
import { roleTagStatement } from '../../support/test-run.js';

// Issue 33 §6: feed_access keeps role OIDs; a record must never follow its OID to another role.
// feed_access records the role's name too (0029_tenant_walls): a record whose OID now names another
// role (a rename, or a dropped role's OID taken again) restricts that role to no feed, and a dropped
// role's records are found and removed (_forget_dropped_roles), each audited.

const reachable = await postgresReachable();
const suffix = randomBytes(3).toString('hex');

describe.skipIf(!reachable)(`feed records never follow an OID to another role (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let clinics: TwoClinics;
  const other = `drift_other_${suffix}`;
  const gone = `drift_gone_${suffix}`;
  const renamed = `drift_renamed_${suffix}`;

  beforeAll(async () => {
    clinics = await twoClinics('drift');
    const rx = samplePrescription(1, { prefix: 'drift' });
    await clinics.owner`select intake_sync.register_prescription(${rx.external_id}, ${JSON.stringify(identityOf(rx))}::text::jsonb, ${FEED_A})`;
  }, 60_000);
  afterAll(async () => {
    await clinics.owner.unsafe(`drop owned by "${other}"; drop role if exists "${other}"`).catch(() => {});
    await clinics.owner.unsafe(`drop role if exists "${gone}"`).catch(() => {});
    await clinics?.close();
  });

  const visible = async (role: string) => {
    const sql = clinics.as(role);
    const [row] = await sql<{ feeds: string[] | null }[]>`select intake_sync._visible_feeds() as feeds`;
    const [count] = await sql<{ n: number }[]>`select count(*)::int as n from intake_sync.prescription_status`;
    await sql.end({ timeout: 1 });
    return { feeds: row?.feeds ?? null, rows: count?.n ?? -1 };
  };

  it('a renamed role sees no feed (its record names the old name) until grants names its feeds again', async () => {
    expect(await visible(clinics.appRole)).toEqual({ feeds: '{clinic-a}', rows: 1 });
    await clinics.owner.unsafe(`alter role "${clinics.appRole}" rename to "${renamed}"`);
    try {
      expect(await visible(renamed)).toEqual({ feeds: '{}', rows: 0 });
      const app = clinics.as(renamed);
      const refused = await app`select intake_sync.cancel_prescription('drift-1', ${FEED_A})`.catch((e: { code?: string }) => e);
      expect(refused).toMatchObject({ code: '42501' });
      await app.end({ timeout: 1 });
      // listed (not removed: removing would leave it unrestricted)
      const [listed] = await clinics.owner<
        { role_name: string; now_named: string }[]
      >`select * from intake_sync._forget_dropped_roles(true)`;
      expect(listed).toMatchObject({ role_name: clinics.appRole, now_named: renamed });
      await clinics.owner.unsafe(grantsScript('app', 'intake_sync', renamed, { kind: 'feeds', feeds: [FEED_A] }).join('\n'));
      expect(await visible(renamed)).toEqual({ feeds: '{clinic-a}', rows: 1 });
    } finally {
      await clinics.owner.unsafe(`alter role "${renamed}" rename to "${clinics.appRole}"`);
    }
    await clinics.owner.unsafe(grantsScript('app', 'intake_sync', clinics.appRole, { kind: 'feeds', feeds: [FEED_A] }).join('\n'));
  });

  it("a role holding a dropped role's OID gets nothing of its feeds (the OID taken again, as the catalog would)", async () => {
    await clinics.owner.unsafe(`create role "${other}" login`);
    await clinics.owner.unsafe(roleTagStatement(other));
    await clinics.owner.unsafe(grantStatements('app', 'intake_sync', other).join('\n'));
    // what OID reuse leaves behind: a record for a dropped role's name on the OID this role now holds
    await clinics.owner.unsafe(
      `insert into intake_sync.feed_access (role, role_name, feed) values ('"${other}"'::regrole, 'dropped_long_ago', 'clinic-a')`,
    );
    expect(await visible(other)).toEqual({ feeds: '{}', rows: 0 });
    await clinics.owner.unsafe(`delete from intake_sync.feed_access where role_name = 'dropped_long_ago'`);
  });

  it("a dropped role's records are listed, then removed with a role.forget audit row; other roles keep theirs", async () => {
    await clinics.owner.unsafe(`create role "${gone}" login`);
    await clinics.owner.unsafe(roleTagStatement(gone));
    await clinics.owner.unsafe(grantsScript('app', 'intake_sync', gone, { kind: 'feeds', feeds: [FEED_A] }).join('\n'));
    await clinics.owner.unsafe(`drop owned by "${gone}"; drop role "${gone}"`);
    // a restricted role's view still answers with a dangling OID in the table
    expect(await visible(clinics.appRole)).toEqual({ feeds: '{clinic-a}', rows: 1 });
    const listed = await clinics.owner<
      { role_name: string; now_named: string | null }[]
    >`select * from intake_sync._forget_dropped_roles(false)`;
    expect(listed).toEqual([expect.objectContaining({ role_name: gone, now_named: null, feeds: [FEED_A] })]);
    await clinics.owner`select * from intake_sync._forget_dropped_roles(true)`;
    const left = await clinics.owner<{ role_name: string }[]>`select distinct role_name from intake_sync.feed_access order by 1`;
    expect(left.map((r) => r.role_name)).toEqual([clinics.appRole]);
    const [audit] = await clinics.owner<{ subject: string }[]>`select subject from intake_sync.audit_entries where action = 'role.forget'`;
    expect(audit?.subject).toBe(gone);
  });

  it('an application role may not run the cleaner, nor read feed_access', async () => {
    const app = clinics.as();
    await expect(app`select * from intake_sync._forget_dropped_roles(true)`).rejects.toMatchObject({ code: '42501' });
    await expect(app`select * from intake_sync.feed_access`).rejects.toMatchObject({ code: '42501' });
  });
});

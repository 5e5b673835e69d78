import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantsScript } from '../../../src/db/grants-script.js';
import { registerFeeds } from '../../../src/db/feed-registry.js';
import { grantStatements } from '../../../src/db/grants.js';
import { identityOf, samplePrescription } from '../../../src/sandbox/fixtures.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { roleTagStatement } from '../../support/test-run.js';

// Per-feed access (drizzle/0013_feed_access.sql) with real roles: two clinics' app roles on two
// feeds, an application logging in as a member of one, a pool login that SETs ROLE, a role granted
// before feeds existed, and the runtime role.

const reachable = await postgresReachable();
const suffix = randomBytes(3).toString('hex');
const ROLES = {
  a: `fa_clinic_a_${suffix}`,
  b: `fa_clinic_b_${suffix}`,
  aLogin: `fa_a_login_${suffix}`,
  pool: `fa_pool_${suffix}`,
  legacy: `fa_legacy_${suffix}`,
  runtime: `fa_runtime_${suffix}`,
};
const FEED_A = 'clinic-a';
const FEED_B = 'clinic-b';

describe.skipIf(!reachable)(`per-feed access for application roles (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let tdb: TestDatabase;
  let owner: postgres.Sql;
  const sessions: postgres.Sql[] = [];

  /** A session logged in as `role` (each test's statements run as an application would send them). */
  function as(role: string): postgres.Sql {
    const url = new URL(tdb.url ?? '');
    url.username = role;
    const sql = postgres(url.toString(), { max: 1, onnotice: () => {}, fetch_types: false });
    sessions.push(sql);
    return sql;
  }

  beforeAll(async () => {
    tdb = await createTestDatabase('feed_access');
    // a deployment whose FEEDS_FILE names both clinics: `intake-sync migrate` (or the daemon) registers them
    await registerFeeds(tdb.database.db, [FEED_A, FEED_B], null);
    owner = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
    await owner.unsafe(`create role "${ROLES.a}" login; create role "${ROLES.b}" login;
      create role "${ROLES.aLogin}" login in role "${ROLES.a}";
      create role "${ROLES.pool}" login in role "${ROLES.a}", "${ROLES.b}";
      create role "${ROLES.legacy}" login; create role "${ROLES.runtime}" login;`);
    await owner.unsafe(roleTagStatement(ROLES.a));
    await owner.unsafe(roleTagStatement(ROLES.b));
    await owner.unsafe(roleTagStatement(ROLES.aLogin));
    await owner.unsafe(roleTagStatement(ROLES.pool));
    await owner.unsafe(roleTagStatement(ROLES.legacy));
    await owner.unsafe(roleTagStatement(ROLES.runtime));
    await owner.unsafe(grantsScript('app', 'intake_sync', ROLES.a, { kind: 'feeds', feeds: [FEED_A] }).join('\n'));
    await owner.unsafe(grantsScript('app', 'intake_sync', ROLES.b, { kind: 'feeds', feeds: [FEED_B] }).join('\n'));
    // as a 0.2 install granted it: the GRANTs alone, no feed named
    await owner.unsafe(grantStatements('app', 'intake_sync', ROLES.legacy).join('\n'));
    await owner.unsafe(grantsScript('runtime', 'intake_sync', ROLES.runtime, { kind: 'unchanged' }).join('\n'));
    // one prescription registered and one send queued per feed, by the owner
    for (const [i, feed] of [FEED_A, FEED_B].entries()) {
      const rx = samplePrescription(i + 1, { prefix: feed });
      await owner`select intake_sync.register_prescription(${rx.external_id}, ${JSON.stringify(identityOf(rx))}::text::jsonb, ${feed})`;
      await owner`select intake_sync.send_prescription(${JSON.stringify(rx)}::text::jsonb, ${feed})`;
    }
  });
  afterAll(async () => {
    for (const s of sessions) await s.end({ timeout: 1 });
    await owner?.end({ timeout: 1 });
    await tdb?.drop();
    const admin = postgres(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test', { max: 1, onnotice: () => {} });
    for (const role of Object.values(ROLES).reverse()) await admin.unsafe(`drop role if exists "${role}"`).catch(() => {});
    await admin.end({ timeout: 1 });
  });

  const feedsIn = async (sql: postgres.Sql | postgres.TransactionSql, view: string) =>
    [...new Set((await sql.unsafe(`select feed from intake_sync.${view}`)).map((r) => r.feed as string))].sort();

  it('each clinic role sees only its own feed in prescription_status and outbox_status', async () => {
    const a = as(ROLES.a);
    const b = as(ROLES.b);
    expect(await feedsIn(a, 'prescription_status')).toEqual([FEED_A]);
    expect(await feedsIn(a, 'outbox_status')).toEqual([FEED_A]);
    expect(await feedsIn(b, 'prescription_status')).toEqual([FEED_B]);
    expect(await feedsIn(b, 'outbox_status')).toEqual([FEED_B]);
  });

  it("each clinic role registers, sends and cancels in its own feed; the other's is refused with 42501 naming it, and nothing is written", async () => {
    const a = as(ROLES.a);
    const rx = samplePrescription(10, { prefix: 'own' });
    await a`select intake_sync.register_prescription(${rx.external_id}, ${JSON.stringify(identityOf(rx))}::text::jsonb, ${FEED_A})`;
    await a`select intake_sync.send_prescription(${JSON.stringify(rx)}::text::jsonb, ${FEED_A})`;
    await a`select intake_sync.cancel_prescription(${rx.external_id}, ${FEED_A})`;

    const other = samplePrescription(11, { prefix: 'other' });
    const refusals = [
      a`select intake_sync.register_prescription(${other.external_id}, ${JSON.stringify(identityOf(other))}::text::jsonb, ${FEED_B})`,
      a`select intake_sync.send_prescription(${JSON.stringify(other)}::text::jsonb, ${FEED_B})`,
      a`select intake_sync.cancel_prescription(${other.external_id}, ${FEED_B})`,
      // the default feed is a feed like any other
      a`select intake_sync.cancel_prescription(${other.external_id})`,
    ];
    for (const [i, refused] of refusals.entries()) {
      const feed = i === 3 ? 'default' : FEED_B;
      await expect(refused).rejects.toMatchObject({
        code: '42501',
        message: `feed: role ${ROLES.a} may not use feed "${feed}"`,
        column_name: 'feed',
      });
    }
    const written = await owner`select
      (select count(*)::int from intake_sync.prescriptions where external_id = ${other.external_id}) as prescriptions,
      (select count(*)::int from intake_sync.outbox where external_id = ${other.external_id}) as outbox,
      (select count(*)::int from intake_sync.audit_entries where subject = ${other.external_id}) as audit`;
    expect(written[0]).toEqual({ prescriptions: 0, outbox: 0, audit: 0 });
  });

  it('an application logging in as a member of a granted role gets that role’s feeds', async () => {
    const login = as(ROLES.aLogin);
    expect(await feedsIn(login, 'prescription_status')).toEqual([FEED_A]);
    await expect(login`select intake_sync.cancel_prescription('x', ${FEED_B})`).rejects.toMatchObject({ code: '42501' });
    await login`select intake_sync.cancel_prescription('x', ${FEED_A})`;
  });

  it('a pool login member of both roles has both feeds; SET ROLE narrows it to that role’s feed', async () => {
    const pool = as(ROLES.pool);
    expect(await feedsIn(pool, 'prescription_status')).toEqual([FEED_A, FEED_B]);
    // one connection (max 1): the SET ROLE holds for the statements that follow
    await pool.unsafe(`set role "${ROLES.b}"`);
    expect(await feedsIn(pool, 'outbox_status')).toEqual([FEED_B]);
    await expect(pool`select intake_sync.cancel_prescription('y', ${FEED_A})`).rejects.toMatchObject({
      code: '42501',
      message: `feed: role ${ROLES.b} may not use feed "${FEED_A}"`,
    });
    await pool.unsafe('reset role');
    expect(await feedsIn(pool, 'outbox_status')).toEqual([FEED_A, FEED_B]);
    // a role it is not a member of cannot be SET: Postgres refuses before we are asked
    await expect(pool.unsafe(`set role "${ROLES.legacy}"`)).rejects.toMatchObject({ code: '42501' });
  });

  it('a role granted before feeds were named, the runtime role and the owner keep every feed', async () => {
    for (const role of [ROLES.legacy, ROLES.runtime]) {
      const sql = as(role);
      expect(await feedsIn(sql, 'prescription_status')).toEqual(expect.arrayContaining([FEED_A, FEED_B]));
      await sql`select intake_sync.cancel_prescription('z', ${FEED_B})`;
    }
    expect(await feedsIn(owner, 'outbox_status')).toEqual(expect.arrayContaining([FEED_A, FEED_B]));
  });

  it('audit rows carry the real session_user of the role that acted, in the action’s transaction', async () => {
    const a = as(ROLES.a);
    const rx = samplePrescription(20, { prefix: 'audited' });
    await a.begin(async (tx) => {
      await tx`set local intake_sync.actor = 'nurse-7'`;
      await tx`select intake_sync.register_prescription(${rx.external_id}, ${JSON.stringify(identityOf(rx))}::text::jsonb, ${FEED_A})`;
      await tx`select intake_sync.send_prescription(${JSON.stringify(rx)}::text::jsonb, ${FEED_A})`;
    });
    await a`select intake_sync.cancel_prescription(${rx.external_id}, ${FEED_A})`;
    // rolled back with its action
    await a
      .begin(async (tx) => {
        await tx`select intake_sync.cancel_prescription(${rx.external_id}, ${FEED_A})`;
        throw new Error('rollback');
      })
      .catch(() => {});
    const rows = await owner`select actor, action, feed, subject, detail from intake_sync.audit_log
      where subject = ${rx.external_id} order by id`;
    expect(rows.map((r) => [r.actor, r.action, r.feed])).toEqual([
      [`${ROLES.a} (nurse-7)`, 'prescription.register', FEED_A],
      [`${ROLES.a} (nurse-7)`, 'outbox.send', FEED_A],
      [ROLES.a, 'outbox.cancel', FEED_A],
    ]);
    expect(rows[0]?.detail).toEqual({ inserted: true, identity_changed: false, rematched: 0 });
    expect(rows[1]?.detail).toEqual({ outbox_id: expect.any(Number) });
    // identifiers and counts only: nothing of the patient
    expect(JSON.stringify(rows)).not.toContain(rx.patient.last_name);
    expect(JSON.stringify(rows)).not.toContain(rx.patient.dob);
  });

  it('registering again with another identity is recorded as an identity change', async () => {
    const a = as(ROLES.a);
    const rx = samplePrescription(21, { prefix: 'moved' });
    const register = (identity: unknown) =>
      a`select intake_sync.register_prescription(${rx.external_id}, ${JSON.stringify(identity)}::text::jsonb, ${FEED_A})`;
    await register(identityOf(rx));
    await register(identityOf(rx));
    await register({ ...identityOf(rx), patient_last_name: 'Someone-Else' });
    const rows = await owner`select detail from intake_sync.audit_log where subject = ${rx.external_id} order by id`;
    expect(rows.map((r) => r.detail.identity_changed)).toEqual([false, false, true]);
  });

  it('application roles cannot read or change the feed records or the audit trail', async () => {
    const a = as(ROLES.a);
    await expect(a`select * from intake_sync.feed_access`).rejects.toMatchObject({ code: '42501' });
    await expect(a`insert into intake_sync.feed_access (role, feed) values (${ROLES.a}::regrole, ${FEED_B})`).rejects.toMatchObject({
      code: '42501',
    });
    await expect(a`select * from intake_sync.audit_log`).rejects.toMatchObject({ code: '42501' });
    await expect(a`delete from intake_sync.audit_entries`).rejects.toMatchObject({ code: '42501' });
    await expect(a`select intake_sync._audit('outbox.send', ${FEED_A}, 'forged')`).rejects.toMatchObject({ code: '42501' });
  });

  it('the runtime role reads the audit trail, writes it only through _audit (as itself), and can neither change nor delete it', async () => {
    const runtime = as(ROLES.runtime);
    await runtime`select intake_sync._audit('probe.write', null, 'rt-1', '{}'::jsonb, 'ops@host')`;
    const [row] = await runtime`select actor from intake_sync.audit_log where subject = 'rt-1'`;
    expect(row?.actor).toBe(`${ROLES.runtime} (ops@host)`);
    await expect(runtime`update intake_sync.audit_entries set actor = 'someone-else'`).rejects.toMatchObject({ code: '42501' });
    await expect(runtime`delete from intake_sync.audit_entries`).rejects.toMatchObject({ code: '42501' });
    await expect(runtime`insert into intake_sync.audit_entries (actor, action) values ('x', 'a.b')`).rejects.toMatchObject({
      code: '42501',
    });
  });

  it('regranting replaces the feeds; --all-feeds lifts the restriction; each grant is audited', async () => {
    const b = as(ROLES.b);
    await owner.unsafe(grantsScript('app', 'intake_sync', ROLES.b, { kind: 'feeds', feeds: [FEED_A] }).join('\n'));
    expect(await feedsIn(b, 'prescription_status')).toEqual([FEED_A]);
    await owner.unsafe(grantsScript('app', 'intake_sync', ROLES.b, { kind: 'all' }).join('\n'));
    expect(await feedsIn(b, 'prescription_status')).toEqual(expect.arrayContaining([FEED_A, FEED_B]));
    // without --feed or --all-feeds the record stays as it was
    await owner.unsafe(grantsScript('app', 'intake_sync', ROLES.b, { kind: 'feeds', feeds: [FEED_B] }).join('\n'));
    await owner.unsafe(grantsScript('app', 'intake_sync', ROLES.b, { kind: 'unchanged' }).join('\n'));
    expect(await feedsIn(b, 'prescription_status')).toEqual([FEED_B]);
    const grants =
      await owner`select actor, detail from intake_sync.audit_log where action = 'role.grant' and subject = ${ROLES.b} order by id`;
    expect(grants.map((g) => g.detail.feeds)).toEqual([[FEED_B], [FEED_A], 'all', [FEED_B], 'unchanged']);
    expect(grants[0]?.actor).toBe('postgres');
  });

  it('status_changes_since shows only the role’s feeds (once 0012 filters it with _feed_visible)', async (ctx) => {
    const [def] = await owner`select pg_get_functiondef('intake_sync.status_changes_since(text, integer)'::regprocedure) as d`;
    if (!String(def?.d).includes('_feed_visible'))
      return ctx.skip('status_changes_since is redefined with _feed_visible in 0012 (retention)');
    // one status change per feed (the commit trigger records it as an applied event would)
    await owner`update intake_sync.prescriptions set status = 'accepted' where feed in (${FEED_A}, ${FEED_B}) and status is null`;
    const [all] = await owner`select count(distinct feed)::int as n from intake_sync.status_changes_since(null, 1000)`;
    expect(all?.n, 'the owner sees both feeds').toBe(2);
    const a = as(ROLES.a);
    const changes = await a`select feed from intake_sync.status_changes_since(null, 1000)`;
    expect(new Set(changes.map((c) => c.feed))).toEqual(new Set([FEED_A]));
  });
});

import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { grantStatements } from '../../../src/db/grants.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { registerLocalPrescriptions } from '../../../src/sync/matching/local-prescriptions.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { event, identity, truncateStore } from '../../support/sync/fixtures.js';
import { plainSql, sqlError, type PlainQuery, type PlainSql } from '../../support/sql-api/plain-sql.js';
import { roleTagStatement } from '../../support/test-run.js';

// The triage API as an application (or a psql session of triage staff) uses it: quarantine_open,
// show_quarantined, resolve_quarantined and dismiss_quarantined in plain SQL on a connection of its
// own. The worker's side (applyPage) runs as in production.

let tdb: TestDatabase;
let app: PlainSql;
let other: PlainSql;
const realServer = await postgresReachable();

beforeAll(async () => {
  tdb = await createTestDatabase('sql_api_triage');
  app = plainSql(tdb);
  other = plainSql(tdb);
});
afterAll(async () => {
  await app.close();
  await other.close();
  await tdb.drop();
});
beforeEach(async () => {
  await truncateStore(tdb.database.db);
});

async function applyEvents(events: unknown[]) {
  const { db } = tdb.database;
  const { version } = await loadCheckpoint(db, 'default');
  return applyPage(db, { feed: 'default', expectedVersion: version, nextIterator: `after-v${version}`, events });
}

const subscribed = (e: Record<string, unknown>, subscription: string) => ({ ...e, subscription_id: subscription });
const RESOLVE = `select * from "intake_sync".resolve_quarantined($1, $2, $3)`;
const DISMISS = `select "intake_sync".dismiss_quarantined($1, $2, $3)`;
const SHOW = `select * from "intake_sync".show_quarantined($1, $2)`;
// committed on its own (autocommit) before each read: show_quarantined refuses without it (42501)
const REVEAL = `select "intake_sync".request_reveal($1, $2)`;
const statusOf = async (query: PlainQuery, externalId: string) =>
  (
    await query<{ status: string | null; events: number }>(
      `select status, events from "intake_sync".prescription_status where external_id = $1`,
      [externalId],
    )
  )[0];
const auditCount = async (action: string) =>
  Number((await app.query<{ n: string }>(`select count(*) as n from "intake_sync".audit_log where action = $1`, [action]))[0]?.n);

/** Two held events of sub-x for a patient no local prescription names (a typo in the fax), one of sub-y. */
async function heldTypos() {
  await registerLocalPrescriptions(tdb.database.db, [
    { external_id: 'rx-ada', prescription_identity: identity() },
    { external_id: 'rx-other', prescription_identity: identity({ patient_last_name: 'Other' }) },
  ]);
  await applyEvents([
    subscribed(event('e1', 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Lovelase' }), 'sub-x'),
    subscribed(event('e2', 'dispensed', '2024-12-10T12:00:00Z', { patient_last_name: 'Lovelase' }), 'sub-x'),
    subscribed(event('e3', 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: 'Nobody' }), 'sub-y'),
  ]);
}

describe('quarantine_open', () => {
  test('lists open findings with the event name and no identity field; closed ones leave it', async () => {
    await heldTypos();
    await applyEvents([{ id: 'bad-1', name: 'accepted' }]);
    const rows = await app.query(`select * from "intake_sync".quarantine_open order by held_since, event_id`);
    expect(Object.keys(rows[0] ?? {}).sort()).toEqual(
      [
        'detail',
        'event_id',
        'event_name',
        'feed',
        'held_since',
        'occurred_at',
        'quarantine_key',
        'reason',
        'seen_count',
        'subscription_id',
      ].sort(),
    );
    expect(rows.map((r) => [r.event_id, r.reason, r.event_name])).toEqual([
      ['e1', 'unmatched', 'accepted'],
      ['e2', 'unmatched', 'dispensed'],
      ['e3', 'unmatched', 'accepted'],
      ['bad-1', 'malformed', null],
    ]);
    expect(JSON.stringify(rows)).not.toMatch(/Lovelase|Nobody|1990-12-10/);
    await app.query(DISMISS, ['default', 'e3', 'not_ours']);
    expect((await app.query(`select event_id from "intake_sync".quarantine_open`)).map((r) => r.event_id)).not.toContain('e3');
  });

  test('is filtered by _visible_feeds (the per-feed access hook, read once per query)', async () => {
    await heldTypos();
    await app.query(`create or replace function "intake_sync"."_visible_feeds"() returns text[]
      language sql stable set search_path = pg_catalog, pg_temp as $$ select array['another_feed'] $$`);
    try {
      expect(await app.query(`select * from "intake_sync".quarantine_open`)).toEqual([]);
    } finally {
      await app.query(`create or replace function "intake_sync"."_visible_feeds"() returns text[]
        language sql stable set search_path = pg_catalog, pg_temp as $$ select null::text[] $$`);
    }
  });
});

describe('show_quarantined()', () => {
  test('returns the identity the operator sent and writes quarantine.show to the audit trail', async () => {
    await heldTypos();
    const before = await auditCount('quarantine.show');
    await app.query(REVEAL, ['default', 'e1']);
    const [row] = await app.query(SHOW, ['default', 'e1']);
    expect(row).toMatchObject({
      finding_event_id: 'e1',
      reason: 'unmatched',
      event_name: 'accepted',
      subscription_id: 'sub-x',
      prescription_identity: expect.objectContaining({ patient_last_name: 'Lovelase' }),
    });
    expect(await auditCount('quarantine.show')).toBe(before + 1);
    const [audit] = await app.query(
      `select subject, detail from "intake_sync".audit_log where action = 'quarantine.show' order by id desc limit 1`,
    );
    expect(audit).toEqual({ subject: 'e1', detail: {} });
  });

  test('refuses what does not exist (P0002) and bad arguments (23502, 22023), auditing nothing', async () => {
    const before = await auditCount('quarantine.show');
    expect(await sqlError(app.query(REVEAL, ['default', 'nope']))).toMatchObject({
      code: 'P0002',
      message: expect.stringMatching(/^event_id: /),
    });
    expect(await sqlError(app.query(SHOW, ['default', null]))).toMatchObject({ code: '23502', message: 'event_id: required' });
    expect(await sqlError(app.query(SHOW, ['default', '  ']))).toMatchObject({
      code: '22023',
      message: expect.stringMatching(/^event_id: /),
    });
    expect(await sqlError(app.query(SHOW, ['Bad Feed', 'e1']))).toMatchObject({ code: '22023', message: expect.stringMatching(/^feed: /) });
    expect(await auditCount('quarantine.show')).toBe(before);
  });
});

describe('resolve_quarantined()', () => {
  test('applies the event and its subscription’s other held events, forward only, and links the subscription', async () => {
    await heldTypos();
    const before = await auditCount('quarantine.resolve');
    expect(await app.query(RESOLVE, ['default', 'e1', 'rx-ada'])).toEqual([
      { subscription_id: 'sub-x', events_applied: 2, status: 'dispensed' },
    ]);
    expect(await statusOf(app.query, 'rx-ada')).toEqual({ status: 'dispensed', events: 2 });
    const closed = await app.query(
      `select event_id, resolution, resolution_note from "intake_sync".quarantine where resolved_at is not null order by event_id`,
    );
    expect(closed).toEqual([
      { event_id: 'e1', resolution: 'resolved', resolution_note: 'rx-ada' },
      { event_id: 'e2', resolution: 'resolved', resolution_note: 'rx-ada' },
    ]);
    // sub-y's finding is another subscription's: still open
    expect((await app.query(`select event_id from "intake_sync".quarantine_open`)).map((r) => r.event_id)).toEqual(['e3']);
    const [audit] = await app.query(
      `select subject, detail from "intake_sync".audit_log where action = 'quarantine.resolve' order by id desc limit 1`,
    );
    expect(audit).toEqual({
      subject: 'e1',
      detail: { external_id: 'rx-ada', subscription_id: 'sub-x', events_applied: 2, reason: 'unmatched' },
    });
    expect(await auditCount('quarantine.resolve')).toBe(before + 1);

    // from now on the subscription's events match rx-ada first: the typo'd identity, even one naming rx-other
    const later = await applyEvents([
      subscribed(event('e4', 'accepted', '2024-12-10T13:00:00Z', { patient_last_name: 'Lovelase' }), 'sub-x'),
      subscribed(event('e5', 'delivered', '2024-12-10T14:00:00Z', { patient_last_name: 'Other' }), 'sub-x'),
    ]);
    expect(later).toMatchObject({ matched: 2, quarantined: { unmatched: 0, ambiguous: 0 } });
    expect(await statusOf(app.query, 'rx-ada')).toEqual({ status: 'delivered', events: 4 });
    expect(await statusOf(app.query, 'rx-other')).toEqual({ status: null, events: 0 });
  });

  test('never moves a status backwards', async () => {
    await heldTypos();
    await applyEvents([event('d1', 'delivered', '2024-12-10T15:00:00Z')]);
    expect(await statusOf(app.query, 'rx-ada')).toEqual({ status: 'delivered', events: 1 });
    expect(await app.query(RESOLVE, ['default', 'e2', 'rx-ada'])).toEqual([
      { subscription_id: 'sub-x', events_applied: 2, status: 'delivered' },
    ]);
    expect(await statusOf(app.query, 'rx-ada')).toEqual({ status: 'delivered', events: 3 });
  });

  test('refuses, writing nothing: unknown prescription or finding, closed finding, malformed finding, a subscription linked elsewhere', async () => {
    await heldTypos();
    await applyEvents([{ id: 'bad-1', name: 'accepted' }]);
    const refused = async (args: unknown[]) => sqlError(app.query(RESOLVE, args));
    expect(await refused(['default', 'e1', 'rx-nope'])).toMatchObject({ code: 'P0002', message: expect.stringMatching(/^external_id: /) });
    expect(await refused(['default', 'e-nope', 'rx-ada'])).toMatchObject({ code: 'P0002', message: expect.stringMatching(/^event_id: /) });
    expect(await refused(['default', 'bad-1', 'rx-ada'])).toMatchObject({
      code: '55000',
      message: expect.stringMatching(/^event_id: a malformed/),
    });
    expect(await refused(['default', null, 'rx-ada'])).toMatchObject({ code: '23502', message: 'event_id: required' });
    expect(await refused(['default', 'e1', null])).toMatchObject({ code: '23502', message: 'external_id: required' });
    expect(await refused(['default', 'e1', ''])).toMatchObject({ code: '22023', message: 'external_id: must be 1-512 characters' });
    expect(await refused([null, 'e1', 'rx-ada'])).toMatchObject({ code: '23502', message: 'feed: required' });
    expect(await app.query(`select count(*)::int as n from "intake_sync".subscription_links`)).toEqual([{ n: 0 }]);
    expect(await statusOf(app.query, 'rx-ada')).toEqual({ status: null, events: 0 });

    await app.query(RESOLVE, ['default', 'e1', 'rx-ada']);
    expect(await refused(['default', 'e2', 'rx-ada'])).toMatchObject({
      code: '55000',
      message: 'event_id: the finding is already closed (resolved)',
    });
    // a new held event of sub-x cannot exist any more (it matches): make one of sub-y and link sub-y, then try sub-y elsewhere
    await app.query(RESOLVE, ['default', 'e3', 'rx-other']);
    await applyEvents([subscribed(event('e6', 'accepted', '2024-12-10T16:00:00Z', { patient_last_name: 'Nobody' }), 'sub-z')]);
    await app.query(`insert into "intake_sync".subscription_links (feed, subscription_id, prescription_id, event_id)
      select 'default', 'sub-z', id, 'seed' from "intake_sync".prescriptions where external_id = 'rx-other'`);
    expect(await refused(['default', 'e6', 'rx-ada'])).toMatchObject({
      code: '55000',
      message: "external_id: the event's subscription is already linked to external_id rx-other",
    });
  });

  test('runs in the caller’s transaction: a rollback leaves no link, no status, no audit row', async () => {
    await heldTypos();
    const before = await auditCount('quarantine.resolve');
    const rollback = new Error('rollback');
    await expect(
      app.transaction(async (query) => {
        await query(RESOLVE, ['default', 'e1', 'rx-ada']);
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    expect(await statusOf(app.query, 'rx-ada')).toEqual({ status: null, events: 0 });
    expect(await app.query(`select count(*)::int as n from "intake_sync".subscription_links`)).toEqual([{ n: 0 }]);
    expect(await auditCount('quarantine.resolve')).toBe(before);
  });

  test('passes its feed through _require_feed (the access hook refuses it)', async () => {
    await heldTypos();
    await app.query(`create or replace function "intake_sync"."_feed_access_check"(feed text) returns void
      language plpgsql stable set search_path = pg_catalog, pg_temp as $$
      begin raise exception 'feed: access denied' using errcode = '42501'; end $$`);
    try {
      expect(await sqlError(app.query(RESOLVE, ['default', 'e1', 'rx-ada']))).toMatchObject({ code: '42501' });
      expect(await sqlError(app.query(DISMISS, ['default', 'e1', 'not_ours']))).toMatchObject({ code: '42501' });
      expect(await sqlError(app.query(SHOW, ['default', 'e1']))).toMatchObject({ code: '42501' });
    } finally {
      await app.query(`create or replace function "intake_sync"."_feed_access_check"(feed text) returns void
        language plpgsql stable set search_path = pg_catalog, pg_temp as $$ begin return; end $$`);
    }
  });

  test.skipIf(!realServer)(`refuses REPEATABLE READ, and waits for a page apply holding the match lock (${NEEDS_POSTGRES})`, async () => {
    await heldTypos();
    // REPEATABLE READ: its snapshot would predate the lock
    const repeatable = await sqlError(
      app.transaction(async (query) => {
        await query('set transaction isolation level repeatable read');
        await query(RESOLVE, ['default', 'e1', 'rx-ada']);
      }),
    );
    expect(repeatable.code).toBe('25000');
    // a page apply in flight holds the lock shared: resolve waits for it, then sees what it committed
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const holding = new Promise<void>((resolve) => (locked = resolve));
    const page = other.transaction(async (query) => {
      // as a page apply takes it (src/sync/matching/match-lock.ts)
      await query(`select intake_sync._feed_lock('default', 'match', false)`);
      locked();
      await released;
    });
    await holding;
    let resolvedAt = 0;
    const resolving = app.query(RESOLVE, ['default', 'e1', 'rx-ada']).then((rows) => ((resolvedAt = Date.now()), rows));
    await expect
      .poll(
        async () =>
          (
            await other.query(
              `select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid where l.locktype = 'transactionid' and not l.granted and a.datname = current_database()`,
            )
          )[0]?.n,
      )
      .toBe(1);
    expect(resolvedAt).toBe(0);
    release();
    await page;
    expect(await resolving).toEqual([{ subscription_id: 'sub-x', events_applied: 2, status: 'dispensed' }]);
  });
});

describe('dismiss_quarantined()', () => {
  test('closes an open finding of any reason as dismissed, audited, the event left unapplied', async () => {
    await heldTypos();
    await applyEvents([{ id: 'bad-1', name: 'accepted' }]);
    const before = await auditCount('quarantine.dismiss');
    await app.query(DISMISS, ['default', 'e3', 'not_ours']);
    await app.query(DISMISS, ['default', 'bad-1', 'operator_test']);
    expect(
      await app.query(
        `select event_id, resolution, resolution_note from "intake_sync".quarantine where resolution = 'dismissed' order by event_id`,
      ),
    ).toEqual([
      { event_id: 'bad-1', resolution: 'dismissed', resolution_note: 'operator_test' },
      { event_id: 'e3', resolution: 'dismissed', resolution_note: 'not_ours' },
    ]);
    expect(await app.query(`select prescription_id from "intake_sync".events where id = 'e3'`)).toEqual([{ prescription_id: null }]);
    expect(await auditCount('quarantine.dismiss')).toBe(before + 2);
    // a rematch leaves a dismissed finding alone, even once a prescription matches it
    await registerLocalPrescriptions(tdb.database.db, [
      { external_id: 'rx-nobody', prescription_identity: identity({ patient_last_name: 'Nobody' }) },
    ]);
    expect(await app.query(`select prescription_id from "intake_sync".events where id = 'e3'`)).toEqual([{ prescription_id: null }]);
  });

  test('refuses, writing nothing: unknown or closed finding, a missing or prose reason', async () => {
    await heldTypos();
    const before = await auditCount('quarantine.dismiss');
    const refused = async (args: unknown[]) => sqlError(app.query(DISMISS, args));
    expect(await refused(['default', 'nope', 'not_ours'])).toMatchObject({ code: 'P0002', message: expect.stringMatching(/^event_id: /) });
    expect(await refused(['default', 'e1', null])).toMatchObject({ code: '23502', message: 'reason: required' });
    expect(await refused(['default', 'e1', 'Patient Ada says it is not hers'])).toMatchObject({
      code: '22023',
      message: expect.stringMatching(/^reason: /),
    });
    expect(await auditCount('quarantine.dismiss')).toBe(before);
    await app.query(DISMISS, ['default', 'e1', 'not_ours']);
    expect(await refused(['default', 'e1', 'not_ours'])).toMatchObject({
      code: '55000',
      message: 'event_id: the finding is already closed (dismissed)',
    });
  });
});

describe.skipIf(!realServer)(`as an application role with the SQL API grants only (${NEEDS_POSTGRES})`, () => {
  test('reads quarantine_open and calls the triage functions; reaches no table', async () => {
    await heldTypos();
    const role = `triage_app_${randomBytes(3).toString('hex')}`;
    await app.query(`create role "${role}" login`);
    await app.query(roleTagStatement(role));
    const url = new URL(tdb.url ?? '');
    url.username = role;
    const asApp = postgres(url.toString(), { max: 1, onnotice: () => {}, fetch_types: false });
    try {
      await app.query(grantStatements('app', 'intake_sync', role).join('\n'));
      expect((await asApp`select event_id from intake_sync.quarantine_open order by event_id`).map((r) => r.event_id)).toEqual([
        'e1',
        'e2',
        'e3',
      ]);
      await asApp`select intake_sync.request_reveal('default', 'e3')`;
      const [shown] = await asApp`select reason from intake_sync.show_quarantined('default', 'e3')`;
      expect(shown).toEqual({ reason: 'unmatched' });
      await asApp`select intake_sync.dismiss_quarantined('default', 'e3', 'not_ours')`;
      expect(await asApp`select * from intake_sync.resolve_quarantined('default', 'e1', 'rx-ada')`).toEqual([
        { subscription_id: 'sub-x', events_applied: 2, status: 'dispensed' },
      ]);
      await expect(asApp`select count(*) from intake_sync.subscription_links`).rejects.toThrow(/permission denied/);
      // the audit trail names the application's role
      const [audit] = await app.query(
        `select actor from "intake_sync".audit_entries where action = 'quarantine.resolve' order by id desc limit 1`,
      );
      expect(audit).toEqual({ actor: role });
    } finally {
      await asApp.end({ timeout: 5 });
      await app.query(`drop owned by "${role}"`);
      await app.query(`drop role "${role}"`);
    }
  });
});

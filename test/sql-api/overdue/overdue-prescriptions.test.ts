import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { intakeSyncApi } from '../../../src/api/intake-sync-api.js';
import { Registry } from 'prom-client';
import { overdueSource, registerOverdueMetric } from '../../../src/ops/metrics-overdue.js';
import { writeFeedDeadlines } from '../../../src/store-api/overdue/feed-deadlines.js';
import { DEFAULT_STAGE_DEADLINES, feedStageDeadlines } from '../../../src/config/overdue-deadlines.js';
import { NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { FEED_A, FEED_B, type TwoClinics, twoClinics } from '../../support/sql-api/two-clinics.js';

// intake_sync.overdue_prescriptions with real roles: every stage, a per-feed override, `off`, a
// cancellation, a prescription that moves on, and each clinic's app role seeing its own feed only.
// Stage start times are written relative to the database's now(), the view's clock.

const reachable = await postgresReachable();
const HOUR = 3_600_000;

describe.skipIf(!reachable)(`overdue_prescriptions (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let clinics: TwoClinics;
  let tdb: TestDatabase;
  let owner: postgres.Sql;
  let APP_A: string;
  let APP_B: string;
  const as = (role: string): postgres.Sql => clinics.as(role);

  /** A prescription at `status` (rank) since `hoursAgo`. */
  async function prescription(feed: string, externalId: string, status: string | null, rank: number, hoursAgo: number | null) {
    await owner`insert into intake_sync.prescriptions (feed, external_id, patient_first_name, patient_last_name, patient_state,
        patient_dob, prescriber_npi, written_date, drug_ndc, identity_key, status, status_rank, status_occurred_at)
      values (${feed}, ${externalId}, 'F', 'L', 'NY', '1970-01-01', '1234567893', '2024-01-01', '00000000000', ${`key-${externalId}`},
        ${status}, ${rank}, ${hoursAgo === null ? null : owner`now() - make_interval(hours => ${hoursAgo})`})`;
  }
  async function delivered(feed: string, externalId: string, kind: 'send' | 'cancel', hoursAgo: number) {
    await owner`insert into intake_sync.outbox (feed, external_id, kind, state, completed_at)
      values (${feed}, ${externalId}, ${kind}, 'delivered', now() - make_interval(hours => ${hoursAgo}))`;
  }
  async function listAs(sql: postgres.Sql) {
    const rows = await sql<{ feed: string; external_id: string; stage: string; overdue_by: string }[]>`
      select feed, external_id, stage, extract(epoch from overdue_by)::int as overdue_by from intake_sync.overdue_prescriptions order by feed, external_id`;
    return rows.map((r) => ({ ...r }));
  }

  beforeAll(async () => {
    clinics = await twoClinics('overdue', { appForClinicB: true });
    ({ tdb, owner, appRole: APP_A } = clinics);
    APP_B = clinics.appRoleB ?? '';
    // clinic-b: `sent` after 4h instead of 2h, `dispensed` off
    await writeFeedDeadlines(tdb.database.db, [
      { feed: FEED_A, deadlines: DEFAULT_STAGE_DEADLINES },
      { feed: FEED_B, deadlines: feedStageDeadlines(DEFAULT_STAGE_DEADLINES, { sent: 4 * HOUR, dispensed: null }) },
    ]);
  }, 120_000);

  afterAll(async () => {
    await clinics?.close();
  });

  it('lists each stage past its deadline, from the stage clock, and nothing before it', async () => {
    // every stage, once just inside and once past its deadline (clinic-a: the defaults)
    await delivered(FEED_A, 'a-sent-new', 'send', 1);
    await delivered(FEED_A, 'a-sent-old', 'send', 3);
    await prescription(FEED_A, 'a-acc-new', 'accepted', 1, 23);
    await prescription(FEED_A, 'a-acc-old', 'accepted', 1, 25);
    await prescription(FEED_A, 'a-ord-old', 'ordered', 2, 49);
    await prescription(FEED_A, 'a-dis-new', 'dispensed', 3, 71);
    await prescription(FEED_A, 'a-dis-old', 'dispensed', 3, 73);
    await prescription(FEED_A, 'a-done', 'delivered', 4, 1000);
    await prescription(FEED_A, 'a-rej', 'rejected', 5, 1000);
    // a cancellation replaces the status stage, counted from its delivery
    await prescription(FEED_A, 'a-cancel', 'ordered', 2, 100);
    await delivered(FEED_A, 'a-cancel', 'cancel', 49);
    // clinic-b: sent overridden to 4h, dispensed off
    await delivered(FEED_B, 'b-sent-3h', 'send', 3);
    await delivered(FEED_B, 'b-sent-5h', 'send', 5);
    await prescription(FEED_B, 'b-dis', 'dispensed', 3, 1000);

    const all = await listAs(owner);
    expect(all.map((r) => `${r.feed}/${r.external_id}/${r.stage}`)).toEqual([
      'clinic-a/a-acc-old/accepted',
      'clinic-a/a-cancel/cancel_requested',
      'clinic-a/a-dis-old/dispensed',
      'clinic-a/a-ord-old/ordered',
      'clinic-a/a-sent-old/sent',
      'clinic-b/b-sent-5h/sent',
    ]);
    const byId = new Map(all.map((r) => [r.external_id, r.overdue_by]));
    // 25h at accepted, deadline 24h: one hour over (a few seconds of test time allowed)
    expect(byId.get('a-acc-old')).toBeGreaterThanOrEqual(3600);
    expect(byId.get('a-acc-old')).toBeLessThan(3600 + 120);
    expect(byId.get('b-sent-5h')).toBeGreaterThanOrEqual(3600);
    expect(byId.get('b-sent-5h')).toBeLessThan(3600 + 120);
  });

  it('drops a prescription that moves on, and a sent one once its first event arrives', async () => {
    await owner`update intake_sync.prescriptions set status = 'ordered', status_rank = 2, status_occurred_at = now()
      where feed = ${FEED_A} and external_id = 'a-acc-old'`;
    await prescription(FEED_A, 'a-sent-old', 'accepted', 1, 0);
    // the cancelled one reaches a terminal status
    await owner`update intake_sync.prescriptions set status = 'rejected', status_rank = 5, status_occurred_at = now()
      where feed = ${FEED_A} and external_id = 'a-cancel'`;
    const ids = (await listAs(owner)).map((r) => r.external_id);
    expect(ids).not.toContain('a-acc-old');
    expect(ids).not.toContain('a-sent-old');
    expect(ids).not.toContain('a-cancel');
    expect(ids).toContain('a-dis-old');
  });

  it('shows each app role its own feeds only, and is a security barrier', async () => {
    const a = await listAs(as(APP_A));
    const b = await listAs(as(APP_B));
    expect(a.length).toBeGreaterThan(0);
    expect(new Set(a.map((r) => r.feed))).toEqual(new Set([FEED_A]));
    expect(b.map((r) => r.external_id)).toEqual(['b-sent-5h']);
    const [view] = await owner<{ options: string[] | null }[]>`
      select c.reloptions as options from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'intake_sync' and c.relname = 'overdue_prescriptions'`;
    expect(view?.options).toContain('security_barrier=true');
  });

  it('overdue() from Node: its feed by default, every visible feed with null, a bad feed named', async () => {
    const appA = as(APP_A);
    const rows = await intakeSyncApi(appA, { feed: FEED_A }).overdue();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.feed === FEED_A && r.since instanceof Date && r.overdue_by_seconds > 0)).toBe(true);
    expect(Object.keys(rows[0] ?? {}).sort()).toEqual(['external_id', 'feed', 'overdue_by_seconds', 'since', 'stage']);
    // clinic-a's role asking for clinic-b sees nothing of it
    expect(await intakeSyncApi(appA, { feed: FEED_A }).overdue({ feed: FEED_B })).toEqual([]);
    expect((await intakeSyncApi(owner).overdue({ feed: null })).map((r) => r.feed)).toContain(FEED_B);
    await expect(intakeSyncApi(owner).overdue({ feed: 'Bad Feed!' })).rejects.toThrow(/feed/);
  });

  it('the metric counts per feed and stage at scrape time, 0 for a stage with none', async () => {
    const registry = new Registry();
    registerOverdueMetric([registry], [FEED_A, FEED_B], overdueSource(tdb.database));
    const text = await registry.metrics();
    expect(text).toContain('intake_sync_prescriptions_overdue{feed="clinic-a",stage="dispensed"} 1');
    expect(text).toContain('intake_sync_prescriptions_overdue{feed="clinic-a",stage="sent"} 0');
    expect(text).toContain('intake_sync_prescriptions_overdue{feed="clinic-b",stage="sent"} 1');
  });

  it('a stage turned off and back on follows feed_deadlines at once', async () => {
    await writeFeedDeadlines(tdb.database.db, [{ feed: FEED_A, deadlines: { ...DEFAULT_STAGE_DEADLINES, dispensed: null } }]);
    expect((await listAs(owner)).map((r) => r.external_id)).not.toContain('a-dis-old');
    await writeFeedDeadlines(tdb.database.db, [{ feed: FEED_A, deadlines: DEFAULT_STAGE_DEADLINES }]);
    expect((await listAs(owner)).map((r) => r.external_id)).toContain('a-dis-old');
  });
});

import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFeedDeadlines } from '../../../src/store-api/overdue/feed-deadlines.js';
import { DEFAULT_STAGE_DEADLINES, feedStageDeadlines } from '../../../src/config/overdue-deadlines.js';
import { NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { FEED_A, FEED_B, type TwoClinics, twoClinics } from '../../support/sql-api/two-clinics.js';

// overdue_page and overdue_counts (the console's Overdue page and the Feeds page's counts, issue 34 §6)
// with real roles: the same rows as overdue_prescriptions, oldest first and cut at max_rows; counts
// that stop at at_most + 1; a cancellation delivered twice counted once, from its first delivery; each
// clinic's app role seeing its own feed only; bad arguments named.

const reachable = await postgresReachable();
const HOUR = 3_600_000;

type Row = { feed: string; external_id: string; stage: string; since: Date };

describe.skipIf(!reachable)(`overdue_page, overdue_counts (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let clinics: TwoClinics;
  let tdb: TestDatabase;
  let owner: postgres.Sql;
  let APP_A: string;
  let APP_B: string;
  const as = (role: string): postgres.Sql => clinics.as(role);
  const key = (r: Row) => `${r.feed}/${r.external_id}/${r.stage}`;
  const page = (sql: postgres.Sql, feed: string | null, stage: string | null, max: number) =>
    sql<Row[]>`select feed, external_id, stage, since from intake_sync.overdue_page(${feed}, ${stage}, ${max})`;
  const counts = async (sql: postgres.Sql, atMost: number) =>
    Object.fromEntries(
      (await sql<{ feed: string; stage: string; n: number }[]>`select feed, stage, n from intake_sync.overdue_counts(${atMost})`).map(
        (r) => [`${r.feed}/${r.stage}`, r.n],
      ),
    );

  beforeAll(async () => {
    clinics = await twoClinics('overdue_page', { appForClinicB: true });
    ({ tdb, owner, appRole: APP_A } = clinics);
    APP_B = clinics.appRoleB ?? '';
    // clinic-b: dispensed off
    await writeFeedDeadlines(tdb.database.db, [
      { feed: FEED_A, deadlines: DEFAULT_STAGE_DEADLINES },
      { feed: FEED_B, deadlines: feedStageDeadlines(DEFAULT_STAGE_DEADLINES, { dispensed: null }) },
    ]);
    // clinic-a: 30 accepted past 24 h (25..54 h ago), 5 inside it; 12 sends delivered past 2 h, unanswered
    await owner.unsafe(`insert into intake_sync.prescriptions (feed, external_id, patient_first_name, patient_last_name, patient_state,
        patient_dob, prescriber_npi, written_date, drug_ndc, identity_key, status, status_rank, status_occurred_at)
      select 'clinic-a', 'a-acc-' || g, 'F', 'L', 'NY', '1970-01-01', '1234567893', '2024-01-01', '00000000000', 'key-a-' || g,
        'accepted', 1, now() - make_interval(hours => case when g <= 30 then 24 + g else 1 end)
      from generate_series(1, 35) g`);
    await owner.unsafe(`insert into intake_sync.outbox (feed, external_id, kind, state, completed_at)
      select 'clinic-a', 'a-sent-' || g, 'send', 'delivered', now() - make_interval(hours => 2, mins => 30 * g)
      from generate_series(1, 12) g`);
    // a prescription whose cancellation was delivered twice: overdue once, from the first delivery (60 h ago)
    await owner.unsafe(`insert into intake_sync.prescriptions (feed, external_id, patient_first_name, patient_last_name, patient_state,
        patient_dob, prescriber_npi, written_date, drug_ndc, identity_key, status, status_rank, status_occurred_at)
      values ('clinic-a', 'a-cancel', 'F', 'L', 'NY', '1970-01-01', '1234567893', '2024-01-01', '00000000000', 'key-a-cancel',
        'ordered', 2, now() - interval '100 hours')`);
    await owner.unsafe(`insert into intake_sync.outbox (feed, external_id, kind, state, completed_at)
      values ('clinic-a', 'a-cancel', 'cancel', 'delivered', now() - interval '60 hours'),
             ('clinic-a', 'a-cancel', 'cancel', 'delivered', now() - interval '50 hours')`);
    // clinic-b: a dispensed one (stage off there) and 3 accepted past the deadline
    await owner.unsafe(`insert into intake_sync.prescriptions (feed, external_id, patient_first_name, patient_last_name, patient_state,
        patient_dob, prescriber_npi, written_date, drug_ndc, identity_key, status, status_rank, status_occurred_at)
      select 'clinic-b', 'b-' || g, 'F', 'L', 'NY', '1970-01-01', '1234567893', '2024-01-01', '00000000000', 'key-b-' || g,
        case when g = 0 then 'dispensed' else 'accepted' end, case when g = 0 then 3 else 1 end, now() - interval '1000 hours'
      from generate_series(0, 3) g`);
  }, 120_000);

  afterAll(async () => {
    await clinics?.close();
  });

  it("pages the view's rows oldest first, cut at max_rows, of a feed and a stage when given", async () => {
    const view = await owner<Row[]>`select feed, external_id, stage, since from intake_sync.overdue_prescriptions
      order by since, feed, external_id`;
    // 30 accepted + 12 sent + 1 cancel_requested in clinic-a, 3 accepted in clinic-b
    expect(view).toHaveLength(46);
    expect((await page(owner, null, null, 1000)).map(key)).toEqual(view.map(key));
    expect((await page(owner, null, null, 10)).map(key)).toEqual(view.slice(0, 10).map(key));
    const sent = await page(owner, FEED_A, 'sent', 5);
    expect(sent.map(key)).toEqual(
      view
        .filter((r) => r.feed === FEED_A && r.stage === 'sent')
        .slice(0, 5)
        .map(key),
    );
    expect(await page(owner, FEED_B, 'dispensed', 50)).toEqual([]);
  });

  it('a cancellation delivered twice is one row, from its first delivery', async () => {
    const [row] = await page(owner, FEED_A, 'cancel_requested', 50);
    expect(row?.external_id).toBe('a-cancel');
    const hoursAgo = (Date.now() - (row?.since.getTime() ?? 0)) / HOUR;
    expect(hoursAgo).toBeGreaterThan(59.9);
    expect(hoursAgo).toBeLessThan(60.1);
    expect((await page(owner, FEED_A, 'cancel_requested', 50)).length).toBe(1);
  });

  it('counts each feed and stage up to at_most + 1', async () => {
    expect(await counts(owner, 1000)).toEqual({
      'clinic-a/accepted': 30,
      'clinic-a/sent': 12,
      'clinic-a/cancel_requested': 1,
      'clinic-b/accepted': 3,
    });
    // 30 accepted and 12 sent: at most 10 counted, 11 read as "more than 10"
    expect(await counts(owner, 10)).toEqual({
      'clinic-a/accepted': 11,
      'clinic-a/sent': 11,
      'clinic-a/cancel_requested': 1,
      'clinic-b/accepted': 3,
    });
  });

  it("shows each app role its own feed only, even when it asks for another's", async () => {
    const a = as(APP_A);
    const b = as(APP_B);
    expect(new Set((await page(a, null, null, 1000)).map((r) => r.feed))).toEqual(new Set([FEED_A]));
    expect((await page(b, null, null, 1000)).map((r) => r.external_id).sort()).toEqual(['b-1', 'b-2', 'b-3']);
    expect(await page(a, FEED_B, null, 1000)).toEqual([]);
    expect(await counts(b, 1000)).toEqual({ 'clinic-b/accepted': 3 });
  });

  it('names a bad max_rows or at_most, and an app role cannot call the internal function', async () => {
    await expect(page(owner, null, null, 0)).rejects.toThrow(/max_rows: from 1 to 1000/);
    await expect(page(owner, null, null, 1001)).rejects.toThrow(/max_rows/);
    await expect(counts(owner, 0)).rejects.toThrow(/at_most: from 1 to 100000/);
    await expect(as(APP_A)`select * from intake_sync._overdue_oldest('clinic-a', 'accepted', interval '1 hour', 10)`).rejects.toThrow(
      /permission denied/,
    );
  });
});

import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantsScript } from '../../../src/db/grants-script.js';
import { registerFeeds } from '../../../src/db/feed-registry.js';
import { writeFeedDeadlines } from '../../../src/store-api/overdue/feed-deadlines.js';
import { DEFAULT_STAGE_DEADLINES, feedStageDeadlines } from '../../../src/config/overdue-deadlines.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { roleTagStatement } from '../../support/test-run.js';

// overdue_page and overdue_counts (the console's Overdue page and the Feeds page's counts, issue 34 §6)
// with real roles: the same rows as overdue_prescriptions, oldest first and cut at max_rows; counts
// that stop at at_most + 1; a cancellation delivered twice counted once, from its first delivery; each
// clinic's app role seeing its own feed only; bad arguments named.

const reachable = await postgresReachable();
const suffix = randomBytes(3).toString('hex');
const APP_A = `odp_clinic_a_${suffix}`;
const APP_B = `odp_clinic_b_${suffix}`;
const FEED_A = 'clinic-a';
const FEED_B = 'clinic-b';
const HOUR = 3_600_000;

type Row = { feed: string; external_id: string; stage: string; since: Date };

describe.skipIf(!reachable)(`overdue_page, overdue_counts (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let tdb: TestDatabase;
  let owner: postgres.Sql;
  const sessions: postgres.Sql[] = [];
  function as(role: string): postgres.Sql {
    const url = new URL(tdb.url ?? '');
    url.username = role;
    const sql = postgres(url.toString(), { max: 1, onnotice: () => {}, fetch_types: false });
    sessions.push(sql);
    return sql;
  }
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
    tdb = await createTestDatabase('overdue_page');
    await registerFeeds(tdb.database.db, [FEED_A, FEED_B], null);
    owner = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
    await owner.unsafe(`create role "${APP_A}" login; create role "${APP_B}" login;`);
    await owner.unsafe(roleTagStatement(APP_A));
    await owner.unsafe(roleTagStatement(APP_B));
    await owner.unsafe(grantsScript('app', 'intake_sync', APP_A, { kind: 'feeds', feeds: [FEED_A] }).join('\n'));
    await owner.unsafe(grantsScript('app', 'intake_sync', APP_B, { kind: 'feeds', feeds: [FEED_B] }).join('\n'));
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
    for (const s of sessions) await s.end();
    await owner?.unsafe(`drop owned by "${APP_A}"; drop owned by "${APP_B}"; drop role "${APP_A}"; drop role "${APP_B}";`);
    await owner?.end();
    await tdb?.drop();
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

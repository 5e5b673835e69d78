import { describe, expect, it } from 'vitest';
import { postgresReachable } from '../../support/db.js';
import { clearStatistics, usePlanDatabase } from '../../support/sql-api/plans.js';

// The Feeds page (feed_overview) at size (issue 34 §6, bench:console at 1M events): each feed's failed
// outbox rows were counted by reading every outbox row of the feed (161 ms of the page's 350 under
// load). Migration 0032's partial index of failed rows makes it one range of the feed, with no planner
// statistics and after ANALYZE. Its open findings by reason are counted up to 1,001 per (feed, reason)
// (open_findings_capped): counting every one walked 50,505 findings a feed and sorted them (~290 ms
// under load); now each count stops inside one range of quarantine_open_reason_idx (0035).
const real = await postgresReachable();
const ROWS = 4_000;
/** clinic_a's findings: all unmatched (an even g is never g % 4 = 1), more than the 1,001 the capped count reads */
const CLINIC_A_UNMATCHED = ROWS / 2;

const planDb = usePlanDatabase(real, 'feed_overview_plan', async (admin) => {
  await admin.unsafe(`insert into intake_sync.feed_checkpoints (feed) values ('clinic_a'), ('clinic_b')`);
  await admin.unsafe(`insert into intake_sync.outbox (feed, external_id, kind, state, completed_at)
    select case when g % 2 = 0 then 'clinic_a' else 'clinic_b' end, 'rx-' || g, 'send',
      case when g % 1000 = 0 then 'failed' else 'delivered' end, now()
    from generate_series(1, ${ROWS}) g`);
  await admin.unsafe(`insert into intake_sync.quarantine (quarantine_key, event_id, feed, reason, detail, raw, first_seen_at, last_seen_at)
    select 'ev-' || g, 'ev-' || g, case when g % 2 = 0 then 'clinic_a' else 'clinic_b' end,
      case when g % 4 = 1 then 'ambiguous' else 'unmatched' end, 'no match', '{}'::jsonb, now() - g * interval '1 minute', now()
    from generate_series(1, ${ROWS}) g`);
});

async function overviewPlan(): Promise<string> {
  const rows = await planDb.admin.unsafe<{ 'QUERY PLAN': string }[]>(
    'explain (costs off) select * from intake_sync.feed_overview order by feed',
  );
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

function expectRanges(plan: string): void {
  expect(plan).toMatch(/using outbox_failed_idx on outbox/);
  expect(plan).not.toMatch(/Seq Scan on (outbox|quarantine)\b/);
}

/** The Feeds page's read (src/store-api/feeds/feed-overview.ts names its columns): the capped count only. */
async function cappedPlan(): Promise<string> {
  const rows = await planDb.admin.unsafe<{ 'QUERY PLAN': string }[]>(
    'explain (analyze, costs off, timing off, buffers off) select feed, open_findings_capped from intake_sync.feed_overview order by feed',
  );
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

function expectCappedRanges(plan: string): void {
  // one range of (reason, feed) per reason, stopped at 1,001: never the whole open quarantine, never sorted
  expect(plan).toMatch(/Index (Only )?Scan using quarantine_open_reason_idx on quarantine/);
  expect(plan).toMatch(/Index Cond: \(\(reason = r\.reason\) AND \(feed = c\.feed\)\)/);
  // (PostgreSQL 18 prints an average of actual rows with two decimals: rows=250.08)
  expect(plan).toMatch(/->  Limit \(actual rows=[\d.]+ loops=\d+\)\n\s+->  Index (Only )?Scan using quarantine_open_reason_idx/);
  expect(plan).not.toMatch(/Seq Scan on quarantine|Bitmap|Sort Key: q\.|quarantine_open_held_idx/);
}

describe.skipIf(!real)("feed_overview counts a feed's failed outbox rows and its open findings by index ranges", () => {
  it('with no planner statistics', async () => {
    await clearStatistics(planDb.admin);
    expectRanges(await overviewPlan());
    expectCappedRanges(await cappedPlan());
  });

  it('after ANALYZE', async () => {
    await planDb.admin.unsafe('analyze intake_sync.outbox, intake_sync.quarantine');
    expectRanges(await overviewPlan());
    const [counted] = await planDb.admin.unsafe<{ failed: string; open: Record<string, number> }[]>(
      `select outbox_failed::text as failed, open_findings as open from intake_sync.feed_overview where feed = 'clinic_a'`,
    );
    expect(counted).toEqual({ failed: '4', open: { unmatched: CLINIC_A_UNMATCHED } });
    expectCappedRanges(await cappedPlan());
    // more than 1,000: read as 1,001 (the page says "more than 1000"); clinic_b's 1,000 ambiguous are exact
    const capped = await planDb.admin.unsafe<{ feed: string; capped: Record<string, number> }[]>(
      'select feed, open_findings_capped as capped from intake_sync.feed_overview order by feed',
    );
    expect(capped.map((r) => ({ ...r }))).toEqual([
      { feed: 'clinic_a', capped: { unmatched: 1_001 } },
      { feed: 'clinic_b', capped: { ambiguous: 1_000, unmatched: 1_000 } },
      // a feed with none open: an empty object, as open_findings
      { feed: 'default', capped: {} },
    ]);
  });
});

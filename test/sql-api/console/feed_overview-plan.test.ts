import { describe, expect, it } from 'vitest';
import { postgresReachable } from '../../support/db.js';
import { clearStatistics, usePlanDatabase } from '../../support/sql-api/plans.js';

// The Feeds page (feed_overview) at size (issue 34 §6, bench:console at 1M events): each feed's failed
// outbox rows were counted by reading every outbox row of the feed (161 ms of the page's 350 under
// load). Migration 0032's partial index of failed rows makes it one range of the feed, with no planner
// statistics and after ANALYZE.
const real = await postgresReachable();
const ROWS = 4_000;

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

describe.skipIf(!real)("feed_overview counts a feed's failed outbox rows by an index range", () => {
  it('with no planner statistics', async () => {
    await clearStatistics(planDb.admin);
    expectRanges(await overviewPlan());
  });

  it('after ANALYZE', async () => {
    await planDb.admin.unsafe('analyze intake_sync.outbox, intake_sync.quarantine');
    expectRanges(await overviewPlan());
    const [counted] = await planDb.admin.unsafe<{ failed: string; open: Record<string, number> }[]>(
      `select outbox_failed::text as failed, open_findings as open from intake_sync.feed_overview where feed = 'clinic_a'`,
    );
    expect(counted).toEqual({ failed: '4', open: { unmatched: 2_000 } });
  });
});

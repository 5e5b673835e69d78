import { describe, expect, test } from 'vitest';
import { postgresReachable } from '../../support/db.js';
import { nestedPlans, planOf, purgeAll, statisticsRows, usePlanDatabase } from '../../support/sql-api/plans.js';

// Issue 26, item 1: _purge_audit planned right on an audit trail that was never analyzed (autovacuum
// off): each batch walks audit_entries_feed_at_idx in `at` order to the limit, for a feed and for the
// rows no feed owns (null), never a scan and sort of the whole trail (96 ms at 100,000 rows before,
// growing with the six years the trail is kept).
const real = await postgresReachable();
const ROWS = 100_000;

const planDb = usePlanDatabase(real, 'purge_audit_plan', async (admin) => {
  // ten years of rows, one in three owned by no feed; the oldest past the 6-year floor
  await admin.unsafe(
    `insert into intake_sync.audit_entries (actor, action, feed, subject, detail, "at")
     select 'postgres', 'quarantine.dismiss', case when g % 3 = 0 then null else 'default' end, 'e' || g, '{}',
       now() - interval '10 years' + g * (interval '10 years' / ${ROWS})
     from generate_series(0, ${ROWS - 1}) g`,
  );
});

describe.skipIf(!real)('_purge_audit on an audit trail without statistics (100,000 rows)', () => {
  test('the table really has no statistics', async () => {
    expect(await statisticsRows(planDb.admin, ['audit_entries'])).toBe(0);
  });

  for (const feed of ['null', "'default'"]) {
    test(`a batch for feed ${feed}: audit_entries_feed_at_idx in order, no scan or sort of the trail`, { timeout: 60_000 }, async () => {
      const plans = await nestedPlans(planDb.url, `select intake_sync._purge_audit(${feed}, now(), 500)`);
      const plan = planOf(plans, 'picked AS');
      expect(plan).toContain('using audit_entries_feed_at_idx on audit_entries');
      expect(plan).not.toMatch(/Seq Scan on audit_entries|Sort Key|Bitmap/);
    });
  }

  test('a whole purge of the rows past the floor, 500 a batch, each within a 2 s statement budget', { timeout: 300_000 }, async () => {
    let purged = 0;
    for (const feed of ['null', "'default'"])
      purged += (await purgeAll(planDb.url, `intake_sync._purge_audit(${feed}, now(), 500)`)).purged;
    const [left] = await planDb.admin<{ n: number }[]>`select count(*)::int as n from intake_sync.audit_entries
        where action = 'quarantine.dismiss' and "at" < now() - interval '6 years'`;
    expect(left?.n).toBe(0);
    expect(purged).toBeGreaterThan(30_000);
  });
});

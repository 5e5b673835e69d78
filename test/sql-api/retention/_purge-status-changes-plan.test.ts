import { describe, expect, test } from 'vitest';
import { postgresReachable } from '../../support/db.js';
import { nestedPlans, planOf, purgeAll, statisticsRows, usePlanDatabase } from '../../support/sql-api/plans.js';

// Issue 26, item 1: _purge('status_changes') planned right on a change feed that was never analyzed
// (autovacuum off): one probe finds the newest commit before the cutoff
// (since 0030 the feed's own, change_commit_feeds_committed_at_idx: each feed has its own clock),
// then each batch takes the feed's oldest commits in order (change_commit_feeds_pk, at most the limit)
// and each commit's changes (status_changes_xid_idx); never the other feed's commits, never a read or
// sort of all the feed's changes. 100,000 changes in 20,000 commits of two feeds, over 90 days.
const real = await postgresReachable();
const COMMITS = 20_000;
const PER_COMMIT = 5;
let CUTOFF = '';

const planDb = usePlanDatabase(real, 'purge_status_changes_plan', async (admin) => {
  // written as stamped history: the triggers that stamp live commits are not what is tested here
  await admin.begin(async (tx) => {
    await tx.unsafe(`set local session_replication_role = replica`);
    await tx.unsafe(
      `insert into intake_sync.change_commits (xid, commit_seq, committed_at)
       select (1000 + g)::text::xid8, g, now() - interval '90 days' + g * (interval '90 days' / ${COMMITS})
       from generate_series(1, ${COMMITS}) g`,
    );
    await tx.unsafe(
      `insert into intake_sync.change_commit_feeds (feed, commit_seq, xid, committed_at)
       select case when g % 2 = 0 then 'default' else 'other' end, g, (1000 + g)::text::xid8,
         now() - interval '90 days' + g * (interval '90 days' / ${COMMITS})
       from generate_series(1, ${COMMITS}) g`,
    );
    await tx.unsafe(
      `insert into intake_sync.status_changes (xid, prescription_id, feed, external_id, previous_status, new_status, changed_at, feed_serial)
       select (1000 + g)::text::xid8, g, case when g % 2 = 0 then 'default' else 'other' end, 'rx-' || g || '-' || k, null, 'accepted', now(),
         (g - 1) * ${PER_COMMIT} + k
       from generate_series(1, ${COMMITS}) g, generate_series(1, ${PER_COMMIT}) k`,
    );
  });
  const [at] = await admin.unsafe<{ c: string }[]>(`select (now() - interval '30 days')::text as c`);
  CUTOFF = `'${at?.c}'::timestamptz`;
});

describe.skipIf(!real)("_purge('status_changes') on a change feed without statistics (100,000 changes)", () => {
  test('the tables really have no statistics', async () => {
    expect(await statisticsRows(planDb.admin, ['status_changes', 'change_commits', 'change_commit_feeds'])).toBe(0);
  });

  test("a batch: the feed's commits in order, each commit's changes by its xid, no scan of the feed's changes", {
    timeout: 60_000,
  }, async () => {
    const plans = await nestedPlans(planDb.url, `select intake_sync._purge('status_changes', 'default', ${CUTOFF}, 500)`);
    const cutoff = planOf(plans, 'ORDER BY f.committed_at DESC');
    expect(cutoff).toContain('using change_commit_feeds_committed_at_idx on change_commit_feeds');
    const batch = planOf(plans, 'taken AS');
    expect(batch).toContain('using change_commit_feeds_pk on change_commit_feeds');
    expect(batch).toContain('using status_changes_xid_idx on status_changes');
    // the sort is of the batch's own commits' changes (at most 500 commits), never of the feed's changes
    expect(batch).not.toMatch(
      /Seq Scan on (status_changes|change_commits|change_commit_feeds)\b|Bitmap|Hash|Merge|status_changes_external_id_idx/,
    );
  });

  test("a whole purge: the feed's changes older than the cutoff, 500 a batch within a 2 s budget; the other feed's untouched", {
    timeout: 300_000,
  }, async () => {
    const count = async (feed: string) =>
      (await planDb.admin<{ n: number }[]>`select count(*)::int as n from intake_sync.status_changes where feed = ${feed}`)[0]?.n ?? -1;
    const otherBefore = await count('other');
    const defaultBefore = await count('default');
    const { purged } = await purgeAll(planDb.url, `intake_sync._purge('status_changes', 'default', ${CUTOFF}, 500)`);
    // two thirds of the 90 days are older than the cutoff
    expect(purged).toBeGreaterThan(defaultBefore * 0.6);
    expect(purged).toBeLessThan(defaultBefore * 0.7);
    expect(await count('default')).toBe(defaultBefore - purged);
    expect(await count('other')).toBe(otherBefore);
    const [left] = await planDb.admin<{ n: number }[]>`select count(*)::int as n from intake_sync.status_changes s
      join intake_sync.change_commits c on c.xid = s.xid where s.feed = 'default' and c.committed_at < ${CUTOFF.replace(/::timestamptz$/, '').replaceAll("'", '')}::timestamptz`;
    expect(left?.n).toBe(0);
  });
});

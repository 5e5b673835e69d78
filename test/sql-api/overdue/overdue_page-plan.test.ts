import { describe, expect, it } from 'vitest';
import { postgresReachable } from '../../support/db.js';
import { clearStatistics, nestedPlans, usePlanDatabase } from '../../support/sql-api/plans.js';

// The console's Overdue page and the Feeds page's overdue counts at size (issue 34 §6, bench:console:
// 175k overdue at 200k prescriptions, 270-559 ms p95 under load): each (feed, stage) must be one
// range of its index walked in order and stopped (prescriptions_overdue_idx, outbox_awaiting_answer_idx),
// never a sort of the whole range, with no planner statistics and after ANALYZE.
const real = await postgresReachable();
const ROWS = 6_000;

const planDb = usePlanDatabase(real, 'overdue_page_plan', async (admin) => {
  await admin.unsafe(`insert into intake_sync.feed_deadlines (feed, stage, deadline)
    select f, s, interval '1 hour' from unnest(array['clinic_a', 'clinic_b']) f,
      unnest(array['sent', 'accepted', 'ordered', 'dispensed', 'cancel_requested']) s`);
  // every one overdue: statuses of rank 1-3 hours to weeks old, and delivered sends and cancellations
  // unanswered (of other prescriptions: a status answers a send, a delivered cancellation ends the status stage)
  await admin.unsafe(`insert into intake_sync.prescriptions (external_id, feed, status, status_rank, status_occurred_at)
    select 'rx-' || g, case when g % 2 = 0 then 'clinic_a' else 'clinic_b' end,
      (array['accepted', 'ordered', 'dispensed'])[1 + g % 3], 1 + g % 3, now() - make_interval(hours => 2 + g % 500)
    from generate_series(1, ${ROWS}) g`);
  await admin.unsafe(`insert into intake_sync.outbox (feed, external_id, kind, state, completed_at)
    select case when g % 2 = 0 then 'clinic_a' else 'clinic_b' end, 'tx-' || g, case when g % 3 = 0 then 'cancel' else 'send' end,
      'delivered', now() - make_interval(hours => 2 + g % 500)
    from generate_series(1, ${ROWS}) g`);
});

/** The plan of _overdue_oldest's statement (auto_explain: the one that ran inside the function). */
async function stagePlan(call: string): Promise<string> {
  const plans = await nestedPlans(planDb.url, call);
  const found = plans.filter((p) => p.includes('prescriptions_overdue_idx') || p.includes('outbox_awaiting_answer_idx'));
  expect(found.length, `the stage statement's plans of ${call}`).toBeGreaterThan(0);
  return found.join('\n');
}

/**
 * The plan without its branches that cannot run. PostgreSQL 18 plans these calls with their values
 * (custom plans): the branches of the other stages show as a `Result` with `One-Time Filter: false`,
 * under the Sort it marks `Disabled`, and never execute. Generic plans (14-17 here) test the stage at
 * run time instead (`One-Time Filter: ($2 = 'sent')`).
 */
function withoutPrunedBranches(plan: string): string {
  return plan.replace(
    /\n\s+->  Limit[^\n]*\n\s+->  Sort[^\n]*\n\s+Disabled: true\n\s+Sort Key[^\n]*\n\s+->  Result[^\n]*\n\s+One-Time Filter: false/g,
    '',
  );
}

function expectWalksInOrder(given: string): void {
  const plan = withoutPrunedBranches(given);
  // each branch: Limit over an index scan of its range, in its order (behind the stage's run-time test
  // in a generic plan)
  expect(plan).toMatch(
    /Limit[^\n]*\n(\s+->  Result[^\n]*\n\s+One-Time Filter[^\n]*\n)?\s+->  Index (Only )?Scan using prescriptions_overdue_idx/,
  );
  expect(plan).toMatch(
    /Limit[^\n]*\n(\s+->  Result[^\n]*\n\s+One-Time Filter: \(\$2 = 'sent'::text\)\n)?\s+->  Index (Only )?Scan using outbox_awaiting_answer_idx on outbox o [^\n]*\n\s+Index Cond: [^\n]*kind = 'send'/,
  );
  // a cancellation counts from its first delivery: one probe of its prescription's outbox rows per row
  // read, never a walk of the feed's awaiting cancellations per row (6.8 s at 3,000 with no statistics)
  expect(plan).toMatch(
    /Nested Loop Anti Join[^\n]*\n\s+->  Index Scan using outbox_awaiting_answer_idx on outbox o(_1)? [^\n]*\n[^\n]*\n\s+->  Index Scan using outbox_feed_external_id_idx on outbox e/,
  );
  expect(plan).not.toMatch(/Sort|Bitmap|Seq Scan on (prescriptions|outbox)\b|Hash|Join Filter/);
}

describe.skipIf(!real)('overdue_page and overdue_counts walk each stage in its index order and stop', () => {
  it('with no planner statistics', async () => {
    await clearStatistics(planDb.admin);
    expectWalksInOrder(await stagePlan('select * from intake_sync.overdue_page(null, null, 200)'));
    expectWalksInOrder(await stagePlan('select * from intake_sync.overdue_counts(1000)'));
  });

  it('after ANALYZE', async () => {
    await planDb.admin.unsafe('analyze intake_sync.prescriptions, intake_sync.outbox, intake_sync.feed_deadlines');
    expectWalksInOrder(await stagePlan('select * from intake_sync.overdue_page(null, null, 200)'));
    expectWalksInOrder(await stagePlan('select * from intake_sync.overdue_counts(1000)'));
    const counted = await planDb.admin.unsafe<{ feed: string; stage: string; n: number }[]>(
      `select feed, stage, n from intake_sync.overdue_counts(1000) where feed = 'clinic_a' order by stage`,
    );
    // 1,000 of each status in clinic_a: exact; its 2,000 sends: read as 1,001 ("more than 1000"); 1,000 cancellations
    expect(counted.map((r) => ({ ...r }))).toEqual([
      { feed: 'clinic_a', stage: 'accepted', n: 1_000 },
      { feed: 'clinic_a', stage: 'cancel_requested', n: 1_000 },
      { feed: 'clinic_a', stage: 'dispensed', n: 1_000 },
      { feed: 'clinic_a', stage: 'ordered', n: 1_000 },
      { feed: 'clinic_a', stage: 'sent', n: 1_001 },
    ]);
  });
});

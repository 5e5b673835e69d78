import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerFeeds } from '../../../src/db/feed-registry.js';
import { writeFeedDeadlines } from '../../../src/store-api/overdue/feed-deadlines.js';
import { DEFAULT_STAGE_DEADLINES } from '../../../src/config/overdue-deadlines.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { clearStatistics } from '../../support/sql-api/plans.js';

// A delivered cancellation (0025): prescriptions.cancel_delivered_at and answered_at on the sends,
// kept by the triggers of sql/api/overdue, so overdue_prescriptions reads index ranges with no probe
// per row. Then the scrape's plan, on 100k prescriptions with no statistics.

const reachable = await postgresReachable();
const FEED = 'clinic-a';

describe.skipIf(!reachable)(
  `a delivered cancellation ends the status and sent stages (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`,
  () => {
    let tdb: TestDatabase;
    let sql: postgres.Sql;
    beforeAll(async () => {
      tdb = await createTestDatabase('cancel_delivered');
      await registerFeeds(tdb.database.db, [FEED], null);
      await writeFeedDeadlines(tdb.database.db, [{ feed: FEED, deadlines: DEFAULT_STAGE_DEADLINES }]);
      sql = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
    }, 120_000);
    afterAll(async () => {
      await sql?.end();
      await tdb?.drop();
    });

    const register = (externalId: string, hoursAgo = 100) =>
      sql`insert into intake_sync.prescriptions (feed, external_id, status, status_rank, status_occurred_at)
      values (${FEED}, ${externalId}, 'ordered', 2, now() - make_interval(hours => ${hoursAgo}))`;
    const queue = async (externalId: string, kind: 'send' | 'cancel', state: 'pending' | 'delivered', hoursAgo = 100) =>
      (
        await sql<{ id: string }[]>`insert into intake_sync.outbox (feed, external_id, kind, state, completed_at)
        values (${FEED}, ${externalId}, ${kind}, ${state}, ${state === 'delivered' ? sql`now() - make_interval(hours => ${hoursAgo})` : null})
        returning id`
      )[0]?.id;
    const cancelDelivered = async (externalId: string) =>
      (
        await sql<{ at: Date | null }[]>`select cancel_delivered_at as at from intake_sync.prescriptions
        where feed = ${FEED} and external_id = ${externalId}`
      )[0]?.at ?? null;
    const sendAnswered = async (externalId: string) =>
      (
        await sql<{ answered: boolean }[]>`select answered_at is not null as answered from intake_sync.outbox
        where feed = ${FEED} and external_id = ${externalId} and kind = 'send' order by id`
      ).map((r) => r.answered);
    const stages = async (externalId: string) =>
      (await sql<{ stage: string }[]>`select stage from intake_sync.overdue_prescriptions where external_id = ${externalId}`).map(
        (r) => r.stage,
      );

    it('a cancellation the outbox delivers later: the prescription is stamped at its delivery, its send answered', async () => {
      await register('rx-1');
      await queue('rx-1', 'send', 'delivered');
      const cancel = await queue('rx-1', 'cancel', 'pending');
      expect(await cancelDelivered('rx-1')).toBeNull();
      expect(await stages('rx-1')).toEqual(['ordered']);
      await sql`update intake_sync.outbox set state = 'delivered', completed_at = now() - interval '50 hours' where id = ${cancel ?? ''}`;
      const at = await cancelDelivered('rx-1');
      expect(at).not.toBeNull();
      expect(Date.now() - (at?.getTime() ?? 0)).toBeGreaterThan(49 * 3_600_000);
      expect(await sendAnswered('rx-1')).toEqual([true]);
      expect(await stages('rx-1')).toEqual(['cancel_requested']);
    });

    it('a failed cancellation changes nothing, and a second delivery keeps the first time', async () => {
      await register('rx-2');
      const failed = await queue('rx-2', 'cancel', 'pending');
      await sql`update intake_sync.outbox set state = 'failed' where id = ${failed ?? ''}`;
      expect(await cancelDelivered('rx-2')).toBeNull();
      await queue('rx-2', 'cancel', 'delivered', 60);
      const first = await cancelDelivered('rx-2');
      await queue('rx-2', 'cancel', 'delivered', 1);
      expect(await cancelDelivered('rx-2')).toEqual(first);
    });

    it('a prescription registered after its cancellation was delivered starts stamped; a send queued after it starts answered', async () => {
      await queue('rx-3', 'cancel', 'delivered', 70);
      await register('rx-3');
      expect(await cancelDelivered('rx-3')).not.toBeNull();
      await queue('rx-3', 'send', 'delivered');
      expect(await sendAnswered('rx-3')).toEqual([true]);
      expect(await stages('rx-3')).toEqual(['cancel_requested']);
      // never registered: the send alone is answered from the start too
      await queue('rx-4', 'cancel', 'delivered', 70);
      await queue('rx-4', 'send', 'delivered');
      expect(await sendAnswered('rx-4')).toEqual([true]);
    });

    it('the scrape on 100k prescriptions with no statistics: index ranges only, no probe per row', async () => {
      await sql`insert into intake_sync.prescriptions (feed, external_id, status, status_rank, status_occurred_at)
      select ${FEED}, 'bulk-' || i, case when i % 10 = 0 then 'accepted' else 'delivered' end, case when i % 10 = 0 then 1 else 4 end,
        now() - make_interval(hours => i % 200) from generate_series(1, 100000) i`;
      await sql`insert into intake_sync.outbox (feed, external_id, kind, state, completed_at)
      select ${FEED}, 'bulk-' || i, case when i % 50 = 0 then 'cancel' else 'send' end, 'delivered', now() - make_interval(hours => i % 200)
      from generate_series(1, 100000) i`;
      await clearStatistics(sql);
      const plan = (
        await sql.unsafe<{ 'QUERY PLAN': string }[]>(
          'explain (analyze, costs off) select feed, stage, count(*) from intake_sync.overdue_prescriptions group by feed, stage',
        )
      )
        .map((r) => r['QUERY PLAN'])
        .join('\n');
      expect(plan).toContain('prescriptions_overdue_idx on prescriptions');
      expect(plan).toContain('outbox_awaiting_answer_idx on outbox');
      // nothing else read of either table: no probe per overdue row, no scan
      expect(plan).not.toMatch(/Seq Scan on (prescriptions|outbox)\b/);
      expect(plan).not.toMatch(/outbox_feed_external_id_idx|prescriptions_feed_external_id_key|Anti Join/);
    }, 120_000);
  },
);

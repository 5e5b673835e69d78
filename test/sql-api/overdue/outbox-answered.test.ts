import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerFeeds } from '../../../src/db/feed-registry.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';

// outbox.answered_at (0022): the triggers that keep overdue_prescriptions' outbox index to the requests
// the operator has not answered yet. A send is answered by the prescription's first status, a
// cancellation by a terminal one; a request queued after its answer is answered from the start.

const reachable = await postgresReachable();
const FEED = 'clinic-a';

describe.skipIf(!reachable)(`outbox.answered_at (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let tdb: TestDatabase;
  let sql: postgres.Sql;
  beforeAll(async () => {
    tdb = await createTestDatabase('outbox_answered');
    await registerFeeds(tdb.database.db, [FEED], null);
    sql = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
  }, 120_000);
  afterAll(async () => {
    await sql?.end();
    await tdb?.drop();
  });

  const queue = (externalId: string, kind: 'send' | 'cancel') =>
    sql`insert into intake_sync.outbox (feed, external_id, kind, state, completed_at) values (${FEED}, ${externalId}, ${kind}, 'delivered', now())`;
  const register = (externalId: string, rank: number) =>
    sql`insert into intake_sync.prescriptions (feed, external_id, status, status_rank, status_occurred_at)
      values (${FEED}, ${externalId}, ${rank === 0 ? null : 'accepted'}, ${rank}, ${rank === 0 ? null : sql`now()`})`;
  const setRank = (externalId: string, rank: number) =>
    sql`update intake_sync.prescriptions set status_rank = ${rank}, status = 'x' where feed = ${FEED} and external_id = ${externalId}`;
  const answered = async (externalId: string) =>
    Object.fromEntries(
      (
        await sql<{ kind: string; answered: boolean }[]>`select kind, answered_at is not null as answered from intake_sync.outbox
          where feed = ${FEED} and external_id = ${externalId} order by id`
      ).map((r) => [r.kind, r.answered]),
    );

  it('a send is answered by the first status, not before', async () => {
    await register('rx-1', 0);
    await queue('rx-1', 'send');
    expect(await answered('rx-1')).toEqual({ send: false });
    await setRank('rx-1', 1);
    expect(await answered('rx-1')).toEqual({ send: true });
  });

  it('a send for a prescription registered later with a status is answered at its registration', async () => {
    await queue('rx-2', 'send');
    expect(await answered('rx-2')).toEqual({ send: false });
    await register('rx-2', 2);
    expect(await answered('rx-2')).toEqual({ send: true });
  });

  it('a cancellation is answered by a terminal status only', async () => {
    await register('rx-3', 1);
    await queue('rx-3', 'cancel');
    expect(await answered('rx-3')).toEqual({ cancel: false });
    await setRank('rx-3', 3);
    expect(await answered('rx-3')).toEqual({ cancel: false });
    await setRank('rx-3', 5);
    expect(await answered('rx-3')).toEqual({ cancel: true });
  });

  it('a request queued after its answer is answered from the start', async () => {
    await register('rx-4', 4);
    await queue('rx-4', 'send');
    await queue('rx-4', 'cancel');
    const rows = await sql<{ kind: string; answered: boolean }[]>`select kind, answered_at is not null as answered
      from intake_sync.outbox where feed = ${FEED} and external_id = 'rx-4' order by id`;
    expect(rows.map((r) => `${r.kind}:${r.answered}`)).toEqual(['send:true', 'cancel:true']);
  });

  it('one statement moving several prescriptions answers exactly the requests whose rank crossed (a statement trigger, issue 37)', async () => {
    for (const [id, rank] of [
      ['rx-5', 0],
      ['rx-6', 1],
      ['rx-7', 2],
      ['rx-8', 0],
    ] as const) {
      await register(id, rank);
      await queue(id, 'send');
    }
    // (a delivered cancellation answers the prescription's sends itself: only rx-6 has one)
    await queue('rx-6', 'cancel');
    // rx-5 0 -> 1 (its send), rx-6 1 -> 4 (its cancellation; its send was answered at registration),
    // rx-7 2 -> 3 (nothing crosses), rx-8 stays at 0
    await sql`update intake_sync.prescriptions p set status_rank = v.rank, status = 'x'
      from (values ('rx-5', 1), ('rx-6', 4), ('rx-7', 3)) as v(id, rank) where p.feed = ${FEED} and p.external_id = v.id`;
    expect(await answered('rx-5')).toEqual({ send: true });
    expect(await answered('rx-6')).toEqual({ send: true, cancel: true });
    expect(await answered('rx-7')).toEqual({ send: true });
    expect(await answered('rx-8')).toEqual({ send: false });
  });

  it('one statement registering several prescriptions answers the requests of those registered with a status (a statement trigger, issue 37)', async () => {
    // queued before their prescriptions exist: rx-9 registered without a status, rx-10 with its first,
    // rx-11 with a terminal one (its cancellation answered too), rx-12 not registered at all
    for (const id of ['rx-9', 'rx-10', 'rx-11', 'rx-12']) await queue(id, 'send');
    await queue('rx-10', 'cancel');
    await queue('rx-11', 'cancel');
    await sql`insert into intake_sync.prescriptions (feed, external_id, status, status_rank, status_occurred_at)
      values (${FEED}, 'rx-9', null, 0, null), (${FEED}, 'rx-10', 'accepted', 1, now()), (${FEED}, 'rx-11', 'x', 4, now())`;
    expect(await answered('rx-9')).toEqual({ send: false });
    expect(await answered('rx-10')).toEqual({ send: true, cancel: false });
    expect(await answered('rx-11')).toEqual({ send: true, cancel: true });
    expect(await answered('rx-12')).toEqual({ send: false });
  });

  it('feed_deadlines takes the five stages only', async () => {
    await expect(
      sql`insert into intake_sync.feed_deadlines (feed, stage, deadline) values (${FEED}, 'delivered', '1 hour')`,
    ).rejects.toThrow(/feed_deadlines_stage_check/);
  });
});

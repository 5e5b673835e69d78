import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { overdueStageSketchSetup } from '../../bench/overdue-stage-sketch.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';

// The ledger prices the overdue index's replacement by this sketch (docs/performance.md, "The overdue index
// and HOT"): its price is only honest if the trigger keeps the stage table as the index would read it, one
// row per prescription in an overdue stage (rank 1-3, its cancel not delivered), with that stage and since.

const onPostgres = await postgresReachable();
let tdb: TestDatabase;
let sql: postgres.Sql;

beforeAll(async () => {
  if (!onPostgres) return;
  tdb = await createTestDatabase('bench_overdue_stage_sketch');
  sql = postgres(tdb.url as string, { max: 1, onnotice: () => {} });
  await sql`insert into intake_sync.prescriptions (feed, external_id, status, status_rank, status_occurred_at)
    select 'default', 'rx-' || n, case when n = 1 then 'accepted' end, case when n = 1 then 1 else 0 end,
      case when n = 1 then timestamptz '2024-12-10 09:00Z' end
    from generate_series(1, 4) n`;
  for (const statement of overdueStageSketchSetup) await sql.unsafe(statement);
});
afterAll(async () => {
  if (!onPostgres) return;
  await sql.end({ timeout: 5 });
  await tdb.drop();
});

const stages = () => sql`select p.external_id, s.stage, s.since::text from intake_sync.sketch_overdue_stages s
  join intake_sync.prescriptions p on p.id = s.prescription_id order by 1`;
const asTheIndexReadsIt = () => sql`select external_id, status as stage, status_occurred_at::text as since
  from intake_sync.prescriptions where status_rank between 1 and 3 and cancel_delivered_at is null order by 1`;
const move = (ids: string[], status: string, rank: number, at: string) => sql`update intake_sync.prescriptions
  set status = ${status}, status_rank = ${rank}, status_occurred_at = ${at}::timestamptz where external_id = any(${ids})`;

describe.skipIf(!onPostgres)(`the overdue stage table sketch (${NEEDS_POSTGRES})`, () => {
  test('is filled from the prescriptions already in a stage, and its index is gone', async () => {
    expect(await stages()).toEqual([{ external_id: 'rx-1', stage: 'accepted', since: '2024-12-10 09:00:00+00' }]);
    const [index] = await sql`select to_regclass('intake_sync.prescriptions_overdue_idx') as name`;
    expect(index?.name).toBeNull();
  });

  test('follows every status change into, within and out of the overdue stages, as the index would', async () => {
    await move(['rx-2', 'rx-3', 'rx-4'], 'accepted', 1, '2024-12-10 10:00Z');
    expect(await stages()).toEqual(await asTheIndexReadsIt());
    expect(await stages()).toHaveLength(4);
    await move(['rx-2'], 'dispensed', 3, '2024-12-10 11:00Z');
    await move(['rx-3'], 'delivered', 4, '2024-12-10 12:00Z');
    await sql`update intake_sync.prescriptions set cancel_delivered_at = now() where external_id = 'rx-4'`;
    expect(await stages()).toEqual(await asTheIndexReadsIt());
    expect(await stages()).toEqual([
      { external_id: 'rx-1', stage: 'accepted', since: '2024-12-10 09:00:00+00' },
      { external_id: 'rx-2', stage: 'dispensed', since: '2024-12-10 11:00:00+00' },
    ]);
  });
});

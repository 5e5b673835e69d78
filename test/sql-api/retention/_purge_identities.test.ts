import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { registerLocalPrescriptions } from '../../../src/sync/matching/local-prescriptions.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { identity, truncateStore } from '../../support/sync/fixtures.js';
import { plainSql, type PlainSql } from '../../support/sql-api/plain-sql.js';
import { loginAs, type RoleSession } from '../../support/sql-api/roles.js';

// Identities do not outlive their purpose (issue 25, item 10): a prescription that ended keeps its
// identity for RETAIN_TERMINAL_IDENTITIES from terminal_at (stamped once by a trigger), then
// _purge_identities, run by the runtime role, removes it and keeps external_id and status.

const realServer = await postgresReachable();
let tdb: TestDatabase;
let owner: PlainSql;
let runtime: RoleSession;

beforeAll(async () => {
  if (!realServer) return;
  tdb = await createTestDatabase('sql_api_purge_ids');
  owner = plainSql(tdb);
  runtime = await loginAs(tdb, owner, 'runtime', 'ids_runtime');
});
afterAll(async () => {
  if (!realServer) return;
  await runtime.close();
  await owner.close();
  await tdb.drop();
});
beforeEach(async () => {
  if (!realServer) return;
  await truncateStore(tdb.database.db);
  await registerLocalPrescriptions(tdb.database.db, [
    { external_id: 'rx-delivered', prescription_identity: identity({ patient_last_name: 'Delivered' }) },
    { external_id: 'rx-rejected', prescription_identity: identity({ patient_last_name: 'Rejected' }) },
    { external_id: 'rx-cancelled', prescription_identity: identity({ patient_last_name: 'Cancelled' }) },
    { external_id: 'rx-ordered', prescription_identity: identity({ patient_last_name: 'Ordered' }) },
  ]);
  // as the worker moves them (the runtime role has UPDATE on prescriptions): the trigger stamps terminal_at
  await runtime.sql`update intake_sync.prescriptions set status = 'delivered', status_rank = 4 where external_id = 'rx-delivered'`;
  await runtime.sql`update intake_sync.prescriptions set status = 'rejected', status_rank = 5 where external_id = 'rx-rejected'`;
  await runtime.sql`update intake_sync.prescriptions set cancellation_requested_at = now() where external_id = 'rx-cancelled'`;
  await runtime.sql`update intake_sync.prescriptions set status = 'ordered', status_rank = 2 where external_id = 'rx-ordered'`;
});

type Row = { external_id: string; status: string | null; patient_last_name: string | null; identity_key: string | null; ended: boolean };
const rows = async () =>
  owner.query<Row>(
    `select external_id, status, patient_last_name, identity_key, terminal_at is not null as ended
     from intake_sync.prescriptions order by external_id`,
  );
const age = (externalId: string, interval: string) =>
  owner.query(`update intake_sync.prescriptions set terminal_at = now() - $2::interval where external_id = $1`, [externalId, interval]);

describe.skipIf(!realServer)(`_purge_identities as the runtime role (${NEEDS_POSTGRES})`, () => {
  test('terminal_at is stamped when a prescription ends (delivered, rejected, cancellation requested), once', async () => {
    expect((await rows()).map((r) => [r.external_id, r.ended])).toEqual([
      ['rx-cancelled', true],
      ['rx-delivered', true],
      ['rx-ordered', false],
      ['rx-rejected', true],
    ]);
    const [before] = await owner.query<{ t: string }>(
      `select terminal_at::text as t from intake_sync.prescriptions where external_id = 'rx-delivered'`,
    );
    await runtime.sql`update intake_sync.prescriptions set status = 'rejected', status_rank = 5 where external_id = 'rx-delivered'`;
    const [after] = await owner.query<{ t: string }>(
      `select terminal_at::text as t from intake_sync.prescriptions where external_id = 'rx-delivered'`,
    );
    expect(after?.t).toBe(before?.t);
  });

  test('removes the identity of those that ended before the cutoff, keeps external_id and status; the rest keep theirs', async () => {
    await age('rx-delivered', '400 days');
    await age('rx-cancelled', '400 days');
    await age('rx-rejected', '10 days');
    const cutoff = "now() - interval '366 days'";
    const [due] = await runtime.sql.unsafe(`select intake_sync._purge_identities('default', ${cutoff}, 1, true) as n`);
    expect(Number(due?.n)).toBe(2);
    // batches of one: the first takes the oldest, the second the next, the third finds nothing
    for (const expected of [1, 1, 0]) {
      const [done] = await runtime.sql.unsafe(`select intake_sync._purge_identities('default', ${cutoff}, 1) as n`);
      expect(Number(done?.n)).toBe(expected);
    }
    expect(await rows()).toEqual([
      { external_id: 'rx-cancelled', status: null, patient_last_name: null, identity_key: null, ended: true },
      { external_id: 'rx-delivered', status: 'delivered', patient_last_name: null, identity_key: null, ended: true },
      { external_id: 'rx-ordered', status: 'ordered', patient_last_name: 'Ordered', identity_key: expect.any(String), ended: false },
      { external_id: 'rx-rejected', status: 'rejected', patient_last_name: 'Rejected', identity_key: expect.any(String), ended: true },
    ]);
    const [left] = await owner.query<Record<string, unknown>>(
      `select patient_first_name, patient_state, patient_dob, prescriber_npi, written_date, drug_ndc, erx_message_id
       from intake_sync.prescriptions where external_id = 'rx-delivered'`,
    );
    expect(Object.values(left ?? {}).every((v) => v === null)).toBe(true);
  });

  test('another feed is not touched, and a prescription in an unfinished subscriptions migrate keeps its identity', async () => {
    await age('rx-delivered', '400 days');
    await owner.query(`insert into intake_sync.subscription_migrations (feed, external_id, target_version, old_subscription_ids)
      values ('default', 'rx-delivered', '2025-01-01', '[]'::jsonb)`);
    const [other] = await runtime.sql`select intake_sync._purge_identities('other', now(), 100) as n`;
    expect(Number(other?.n)).toBe(0);
    const [held] = await runtime.sql`select intake_sync._purge_identities('default', now() - interval '366 days', 100) as n`;
    expect(Number(held?.n)).toBe(0);
    expect((await rows()).find((r) => r.external_id === 'rx-delivered')?.patient_last_name).toBe('Delivered');
  });

  test('refuses bad arguments naming them (22023)', async () => {
    await expect(runtime.sql`select intake_sync._purge_identities('Bad Feed', now(), 10)`).rejects.toMatchObject({ code: '22023' });
    await expect(runtime.sql`select intake_sync._purge_identities('default', now(), 0)`).rejects.toMatchObject({
      code: '22023',
      message: expect.stringMatching(/^max_rows/),
    });
  });

  test('a batch is driven by the partial index (feed, terminal_at)', async () => {
    const plan = await owner.transaction(async (q) => {
      await q('set local enable_seqscan = off');
      return q<{ 'QUERY PLAN': string }>(`explain select p.id from intake_sync.prescriptions p
        where p.feed = 'default' and p.terminal_at is not null and p.identity_key is not null and p.terminal_at < now()
        order by p.terminal_at limit 100`);
    });
    expect(plan.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index Scan using prescriptions_identity_due_idx/);
  });
});

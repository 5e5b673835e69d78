import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { samplePrescription } from '../../../src/sandbox/fixtures.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { plainSql, type PlainSql } from '../../support/sql-api/plain-sql.js';
import { loginAs, type RoleSession } from '../../support/sql-api/roles.js';

// Issue 38: an app links its outbox delivery to its own trace with the standard W3C traceparent, set
// for its transaction (`set local intake_sync.traceparent`); the status changes a traced transaction
// makes carry its trace id, and status_changes_since returns it. As a real app role, plain SQL.

const onPostgres = await postgresReachable();
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const VALID = `00-${TRACE}-00f067aa0ba902b7-01`;

let tdb: TestDatabase;
let owner: PlainSql;
let app: RoleSession;
let nextNumber = 10;

beforeAll(async () => {
  if (!onPostgres) return;
  tdb = await createTestDatabase('sql_api_traceparent');
  owner = plainSql(tdb);
  app = await loginAs(tdb, owner, 'app', 'otel_app');
});
afterAll(async () => {
  if (!onPostgres) return;
  await app.close();
  await owner.close();
  await tdb.drop();
});

/** send_prescription as the app, in a transaction that set intake_sync.traceparent to `setting` first. */
async function sendWith(setting: string | null, n: number): Promise<string | null> {
  const prescription = samplePrescription(n, { prefix: 'tp' });
  const [row] = await app.sql.begin(async (tx) => {
    if (setting !== null) await tx.unsafe('select pg_catalog.set_config($1, $2, true)', ['intake_sync.traceparent', setting]);
    return tx.unsafe('select intake_sync.send_prescription($1::text::jsonb) as id', [JSON.stringify(prescription)]);
  });
  const [stored] = await owner.query<{ traceparent: string | null }>('select traceparent from intake_sync.outbox where id = $1', [row?.id]);
  return stored?.traceparent ?? null;
}

describe.skipIf(!onPostgres)(`the transaction's traceparent (${NEEDS_POSTGRES})`, () => {
  test('a valid version-00 traceparent set for the transaction is kept on the outbox row', async () => {
    expect(await sendWith(VALID, 1)).toBe(VALID);
  });

  test('none set, or set in an earlier transaction only (set local): the row has none', async () => {
    expect(await sendWith(null, 2)).toBeNull();
    expect(await sendWith(null, 3)).toBeNull();
  });

  // W3C Trace Context: a traceparent that does not parse is ignored (a new trace starts); a bad
  // trace context never fails the prescription, so send_prescription queues it without one
  test.each([
    ['upper-case hex', VALID.toUpperCase()],
    ['another version', VALID.replace(/^00/, 'ff')],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`],
    ['an all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['a longer value', `${VALID}-extra`],
    ['a traceparent with a patient name in it', `00-${TRACE}-00f067aa0ba902b7-01 Zqxcanary`],
    ['a quote and SQL', "00-'; drop table intake_sync.outbox; --"],
    ['empty', ''],
  ])('%s is ignored: the row is queued with no traceparent', async (_label, setting) => {
    expect(await sendWith(setting, nextNumber++)).toBeNull();
  });

  test('a status change made in a traced transaction carries its trace id, and status_changes_since returns it to the app', async () => {
    await owner.query(`insert into intake_sync.prescriptions (external_id, patient_first_name, patient_last_name, patient_state,
        patient_dob, prescriber_npi, written_date, drug_ndc, identity_key)
      values ('tp-change-1', 'First', 'Last', 'NY', '1990-01-01', '1234567893', '2024-12-01', '00002015204', 'key-tp-1'),
             ('tp-change-2', 'First', 'Last', 'NY', '1990-01-01', '1234567893', '2024-12-01', '00002015204', 'key-tp-2')`);
    await owner.transaction(async (q) => {
      await q('select pg_catalog.set_config($1, $2, true)', ['intake_sync.traceparent', VALID]);
      await q(`update intake_sync.prescriptions set status = 'accepted' where external_id = 'tp-change-1'`);
    });
    await owner.query(`update intake_sync.prescriptions set status = 'accepted' where external_id = 'tp-change-2'`);
    const changes = await app.sql.unsafe(
      'select external_id, trace_id from intake_sync.status_changes_since(null, 100) order by external_id',
    );
    expect(changes.map((r) => [r.external_id, r.trace_id])).toEqual([
      ['tp-change-1', TRACE],
      ['tp-change-2', null],
    ]);
  });
});

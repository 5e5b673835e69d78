import { readFile } from 'node:fs/promises';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { inTransaction } from '../../../src/db/page-transaction.js';
import { TRACE_ID_OF_SETTING } from '../../../src/db/schema/trace-context-defaults.js';
import { namesOf } from '../../../src/db/store-names.js';
import { applyPageSql, matchLockSharedSql } from '../../../src/sync/apply/page-statement.js';
import { preparePage } from '../../../src/sync/apply/prepare-page.js';
import { registerLocalPrescriptions } from '../../../src/sync/matching/local-prescriptions.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { event, identity, truncateStore } from '../../support/sync/fixtures.js';

// The change trigger computes the trace id of the transaction's intake_sync.traceparent once per
// statement and writes it into every change row it inserts, where the column default of
// status_changes.trace_id (0033) computed it per row. The value must be the default's: the trace id of a
// valid version-00 traceparent, else null. Here through the product's own page statement, one page
// moving PAGE prescriptions, as the bench's pages do.

const FEED = 'default';
const PAGE = 250;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const VALID = `00-${TRACE}-00f067aa0ba902b7-01`;
const onPostgres = await postgresReachable();
let tdb: TestDatabase;
let db: Db;

beforeAll(async () => {
  tdb = await createTestDatabase('sql_api_record_status_changes');
  db = tdb.database.db;
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await truncateStore(db);
});

const who = (i: number) => ({ patient_first_name: `P${i}`, erx_message_id: `ERX-${i}` });

/** PAGE prescriptions, then one page of the product's statement moving all of them to accepted, under `setting`. */
async function pageUnder(setting: string | null): Promise<void> {
  await registerLocalPrescriptions(
    db,
    Array.from({ length: PAGE }, (_, i) => ({ external_id: `rx-${i}`, prescription_identity: identity(who(i)) })),
  );
  const names = namesOf(db);
  const page = preparePage(Array.from({ length: PAGE }, (_, i) => event(`e${i}`, 'accepted', '2024-12-10T10:00:00Z', who(i))));
  const { version } = await loadCheckpoint(db, FEED);
  const statement = applyPageSql(names, {
    feed: FEED,
    expectedVersion: version,
    nextIterator: `after-v${version}`,
    receivedAt: new Date().toISOString(),
    eventsJson: page.rowsJson.events,
    malformedJson: page.rowsJson.malformed,
    malformedCount: 0,
  });
  await inTransaction(db, async (run) => {
    if (setting !== null) await run(sql`select pg_catalog.set_config('intake_sync.traceparent', ${setting}::text, true)`);
    await run(matchLockSharedSql(names, FEED));
    const [row] = await run<{ status_changes: number }>(statement);
    expect(row?.status_changes).toBe(PAGE);
  });
}

/** The change rows' trace ids: each distinct value with its number of rows. */
const traceIds = () =>
  queryRows<{ trace_id: string | null; rows: number }>(
    db,
    sql`select trace_id, count(*)::int as rows from intake_sync.status_changes group by trace_id order by trace_id`,
  );

describe("the change trigger's trace id, once per statement", () => {
  test('a page under a valid traceparent: every change row carries its trace id, and status_changes_since returns it', async () => {
    await pageUnder(VALID);
    expect(await traceIds()).toEqual([{ trace_id: TRACE, rows: PAGE }]);
    const since = await queryRows<{ trace_id: string | null }>(
      db,
      sql`select trace_id from intake_sync.status_changes_since(null::text, 10000)`,
    );
    expect(since).toHaveLength(PAGE);
    expect(new Set(since.map((r) => r.trace_id))).toEqual(new Set([TRACE]));
  });

  test.each([
    ['upper-case hex', VALID.toUpperCase()],
    ['another version', VALID.replace(/^00/, '01')],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`],
    ['an all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['a longer value', `${VALID}-extra`],
    ['a short trace id', `00-${TRACE.slice(1)}-00f067aa0ba902b7-01`],
    ['empty', ''],
  ])('a page under %s: every change row has a null trace id', async (_label, setting) => {
    await pageUnder(setting);
    expect(await traceIds()).toEqual([{ trace_id: null, rows: PAGE }]);
  });

  test('a page with none set (after traced transactions on the same session: the setting reads empty): null', async () => {
    await pageUnder(VALID);
    await truncateStore(db);
    await pageUnder(null);
    expect(await traceIds()).toEqual([{ trace_id: null, rows: PAGE }]);
  });

  test.skipIf(!onPostgres)(
    `a multi-row update on a session that never set it: null; under set local: the trace id (${NEEDS_POSTGRES})`,
    async () => {
      await db.execute(sql`insert into intake_sync.prescriptions (external_id, patient_first_name, patient_last_name, patient_state,
          patient_dob, prescriber_npi, written_date, drug_ndc, identity_key)
        select 'rx-' || g, 'First', 'Last', 'NY', '1990-01-01', '1234567893', '2024-12-01', '00002015204', 'key-' || g
        from generate_series(1, ${PAGE}::int) g`);
      const fresh = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
      try {
        const [unset] = await fresh`select pg_catalog.current_setting('intake_sync.traceparent', true) as value`;
        expect(unset?.value).toBeNull();
        await fresh`update intake_sync.prescriptions set status = 'accepted'`;
        expect(await traceIds()).toEqual([{ trace_id: null, rows: PAGE }]);
        await fresh.begin(async (tx) => {
          await tx`set local intake_sync.traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'`;
          await tx`update intake_sync.prescriptions set status = 'ordered'`;
        });
        expect(await traceIds()).toEqual([
          { trace_id: TRACE, rows: PAGE },
          { trace_id: null, rows: PAGE },
        ]);
      } finally {
        await fresh.end({ timeout: 5 });
      }
    },
  );

  test("the trigger's expression is the column default's (src/db/schema/trace-context-defaults.ts)", async () => {
    const text = await readFile(new URL('../../../sql/api/changes/record_status_changes.sql', import.meta.url), 'utf8');
    expect(text).toContain(`trace text := ${TRACE_ID_OF_SETTING};`);
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { namesOf } from '../../../src/db/store-names.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { registerLocalPrescriptions, type LocalPrescriptionInput } from '../../../src/sync/matching/local-prescriptions.js';
import { MatchLockBudgetError } from '../../../src/sync/matching/errors/match-lock-budget-error.js';
import { identityKey } from '../../../src/sync/matching/identity-key.js';
import { rematch } from '../../../src/operations/matching/rematch-held.js';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../../support/db.js';
import { event, identity, truncateStore } from '../../support/sync/fixtures.js';

// statement_timeout cancels a statement only on a real server
const real = await postgresReachable();
const FEED = 'default';
// far below the default 2 s so the test is quick; far above what the small batches need on a loaded machine
const BUDGET_MS = 1_500;
let tdb: TestDatabase;
let db: Db;

beforeAll(async () => {
  if (!real) return;
  tdb = await createTestDatabase('lock_budget_halving');
  db = tdb.database.db;
  const n = namesOf(db);
  // Test-only triggers that make a statement slow past the budget deterministically: a registration
  // statement over more than 100 rows, a rematch closing more than 2 findings, or the row 'rx-slow'
  await db.execute(
    sql.raw(`create function ${n.schema}.test_slow_statement() returns trigger language plpgsql as $$
    begin
      if (select count(*) from new_rows) > tg_argv[0]::int then perform pg_sleep(30); end if;
      return null;
    end $$`),
  );
  await db.execute(
    sql.raw(`create function ${n.schema}.test_slow_row() returns trigger language plpgsql as $$
    begin
      if new.external_id = 'rx-slow' then perform pg_sleep(30); end if;
      return new;
    end $$`),
  );
  await db.execute(
    sql.raw(`create trigger test_slow_registration after insert on ${n.schema}.prescriptions
      referencing new table as new_rows for each statement execute function ${n.schema}.test_slow_statement('100')`),
  );
  await db.execute(
    sql.raw(`create trigger test_slow_rematch after update on ${n.schema}.quarantine
      referencing new table as new_rows for each statement execute function ${n.schema}.test_slow_statement('2')`),
  );
  await db.execute(
    sql.raw(`create trigger test_slow_row before insert on ${n.schema}.prescriptions
      for each row execute function ${n.schema}.test_slow_row()`),
  );
});
afterAll(async () => {
  if (real) await tdb.drop();
});
beforeEach(async () => {
  if (real) await truncateStore(db);
});

const rows = (count: number, prefix = 'rx'): LocalPrescriptionInput[] =>
  Array.from({ length: count }, (_, i) => ({
    external_id: `${prefix}-${String(i).padStart(4, '0')}`,
    prescription_identity: identity({ patient_last_name: `Patient${i}` }),
  }));

const prescriptionCount = async () =>
  Number((await queryRows<{ n: number }>(db, sql`select count(*)::int as n from ${namesOf(db).prescriptions}`))[0]?.n);

// NEEDS_POSTGRES (test/support/db.ts): skipped on embedded PGlite
describe.skipIf(!real)('the match-lock budget: a batch over it is halved and retried', () => {
  test('a registration of 400 rows whose 400- and 200-row statements exceed the budget commits in 100-row batches', {
    timeout: 60_000,
  }, async () => {
    const halved: number[] = [];
    const committed: number[] = [];
    const result = await registerLocalPrescriptions(db, rows(400), {
      feed: FEED,
      batchSize: 400,
      budgetMs: BUDGET_MS,
      onHalve: (n) => halved.push(n),
      onBatch: (b) => committed.push(b.rows),
    });
    expect(halved).toEqual([400, 200, 200]);
    expect(committed).toEqual([100, 100, 100, 100]);
    expect(result.inserted).toBe(400);
    expect(await prescriptionCount()).toBe(400);
    // each committed batch held the lock far less than a 60 s statement_timeout would have allowed
  });

  test('the batches after a halving start at the size that committed', { timeout: 60_000 }, async () => {
    const committed: number[] = [];
    const halved: number[] = [];
    await registerLocalPrescriptions(db, rows(500), {
      feed: FEED,
      batchSize: 200,
      budgetMs: BUDGET_MS,
      onHalve: (n) => halved.push(n),
      onBatch: (b) => committed.push(b.rows),
    });
    // rows 0-199 halved into 100 + 100; rows 200-299 start at 100 (no halving); rows 300-499 try 200
    // again (a clean batch doubles the size back up) and are halved once more
    expect(halved).toEqual([200, 200]);
    expect(committed).toEqual([100, 100, 100, 100, 100]);
  });

  test('one row that exceeds the budget alone fails naming its external_id; the rows before it committed', {
    timeout: 60_000,
  }, async () => {
    const input = [
      ...rows(3),
      { external_id: 'rx-slow', prescription_identity: identity({ patient_last_name: 'Slow' }) },
      ...rows(3, 'ry'),
    ];
    const failure = await registerLocalPrescriptions(db, input, { feed: FEED, batchSize: 8, budgetMs: BUDGET_MS }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(MatchLockBudgetError);
    expect((failure as Error).message).toContain('the registration of external_id rx-slow alone exceeded the 1500 ms statement budget');
    // halves of 7: [rx-0000..rx-0002, rx-slow] -> [rx-0000, rx-0001] commits, [rx-0002, rx-slow] -> rx-0002 commits, rx-slow fails
    expect(await prescriptionCount()).toBe(3);
  });

  test('a rematch whose batch closes more than 2 findings in one statement commits in batches of 2 keys', { timeout: 60_000 }, async () => {
    const n = namesOf(db);
    const { version } = await loadCheckpoint(db, FEED);
    const people = Array.from({ length: 8 }, (_, i) => identity({ patient_last_name: `Held${i}` }));
    await applyPage(db, {
      feed: FEED,
      expectedVersion: version,
      nextIterator: 'after-held',
      events: people.map((p, i) => event(`held-${i}`, 'accepted', '2024-12-10T10:00:00Z', { patient_last_name: p.patient_last_name })),
    });
    // their prescriptions, written past registration (which would rematch them at once)
    for (const [i, p] of people.entries()) {
      await db.execute(
        sql`insert into ${n.prescriptions} (feed, external_id, patient_first_name, patient_last_name, patient_state, patient_dob,
              prescriber_npi, written_date, drug_ndc, identity_key)
            values (${FEED}, ${`rx-held-${i}`}, ${p.patient_first_name}, ${p.patient_last_name}, ${p.patient_state}, ${p.patient_dob},
              ${p.prescriber_npi}, ${p.written_date}, ${p.drug_ndc}, ${identityKey(p)})`,
      );
    }
    const halved: number[] = [];
    const committed: number[] = [];
    const result = await rematch(db, {
      feed: FEED,
      budgetMs: BUDGET_MS,
      onHalve: (k) => halved.push(k),
      onBatch: (b) => committed.push(b.keys),
    });
    expect(result.matched).toBe(8);
    expect(halved).toEqual([8, 4, 4]);
    expect(committed).toEqual([2, 2, 2, 2]);
  });
});

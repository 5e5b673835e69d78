import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import postgres from 'postgres';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { SQL } from 'drizzle-orm';
import { namesOf } from '../../../src/db/store-names.js';
import { applyPageSql } from '../../../src/sync/apply/page-statement.js';
import { preparePage } from '../../../src/sync/apply/prepare-page.js';
import { pageRowsJson } from '../../../src/sync/apply/page-rows-json.js';
import { nextHeldKeysSql } from '../../../src/sync/matching/rematch.js';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../../helpers/db.js';
import { event } from '../../sync/fixtures.js';

// Issue 26: the statements that run under the match lock or on a page's path keep their plan on
// tables that have never been analyzed (autovacuum off, or the first minute after a burst): 100,000
// held events with their open findings and 20,000 prescriptions, no statistics at all. auto_explain
// (superuser: LOAD) shows the plans of the statements inside the SQL functions.
const real = await postgresReachable();
const HELD = 100_000;
const PRESCRIPTIONS = 20_000;
const dialect = new PgDialect();
let tdb: TestDatabase;
let admin: postgres.Sql;

beforeAll(async () => {
  if (!real) return;
  tdb = await createTestDatabase('plans_without_statistics');
  admin = postgres(tdb.url as string, { max: 1, onnotice: () => {} });
  // four held events per identity, each with its open 'unmatched' finding, as a drain leaves them
  await admin.unsafe(
    `insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version, payload, identity_key, status_rank)
     select 'held-' || g, 'default', 'prescription.received', now(), 'sub-' || (g / 4), '2024-12-10', '{}',
       'held-key-' || lpad((g / 4)::text, 8, '0'), 1
     from generate_series(0, ${HELD - 1}) g`,
  );
  await admin.unsafe(
    `insert into intake_sync.quarantine (quarantine_key, event_id, feed, reason, detail)
     select 'held-' || g, 'held-' || g, 'default', 'unmatched', 'no local prescription matches its identity' from generate_series(0, ${HELD - 1}) g`,
  );
  // the vendor's prescriptions: one in ten is a held identity's, half have an eRx id
  await admin.unsafe(
    `insert into intake_sync.prescriptions (feed, external_id, patient_first_name, patient_last_name, patient_state, patient_dob,
       prescriber_npi, written_date, drug_ndc, identity_key, erx_message_id)
     select 'default', 'rx-' || g, 'a', 'b', 'NY', '1990-01-01', '1234567893', '2024-01-01', '00002015204',
       case when g % 10 = 0 then 'held-key-' || lpad(g::text, 8, '0') else 'local-key-' || g end,
       case when g % 2 = 0 then 'erx-' || g end
     from generate_series(0, ${PRESCRIPTIONS - 1}) g`,
  );
  // no statistics whatever happened before (CREATE INDEX, a stray ANALYZE)
  await admin.unsafe(
    `delete from pg_statistic where starelid in (select oid from pg_class where relnamespace = 'intake_sync'::regnamespace)`,
  );
  await admin.unsafe(`update pg_class set reltuples = -1, relpages = 0 where relnamespace = 'intake_sync'::regnamespace and relkind = 'r'`);
}, 180_000);
afterAll(async () => {
  if (!real) return;
  await admin.end({ timeout: 5 });
  await tdb.drop();
});

/** The plans auto_explain reports for everything `statement` runs, nested statements included. */
async function nestedPlans(statement: string, params: unknown[] = []): Promise<string[]> {
  const plans: string[] = [];
  const session = postgres(tdb.url as string, { max: 1, onnotice: (n) => plans.push(String(n.message)) });
  try {
    await session.begin(async (tx) => {
      await tx.unsafe(`load 'auto_explain'`);
      await tx.unsafe(`set local auto_explain.log_min_duration = 0`);
      await tx.unsafe(`set local auto_explain.log_nested_statements = on`);
      await tx.unsafe(`set local auto_explain.log_level = notice`);
      await tx.unsafe(statement, params as never[]);
      // nothing it wrote stays: every test sees the same tables
      await tx.unsafe('rollback and chain');
    });
  } finally {
    await session.end({ timeout: 5 });
  }
  return plans;
}

/** EXPLAIN of a statement built in TypeScript, with the planner settings its caller pins (`settings`). */
async function explain(statement: SQL, settings: Record<string, string> = {}): Promise<string> {
  const query = dialect.sqlToQuery(statement);
  const rows = await admin.begin(async (tx) => {
    for (const [name, value] of Object.entries(settings)) await tx.unsafe('select set_config($1, $2, true)', [name, value]);
    return tx.unsafe<{ 'QUERY PLAN': string }[]>(`explain ${query.sql}`, query.params as never[]);
  });
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

/** What a plan that holds looks like: index lookups only, no bitmap walking a whole index, no full scan. */
function expectIndexDriven(plan: string, indexes: string[]): void {
  for (const index of indexes) expect(plan).toContain(`using ${index} on`);
  expect(plan).not.toMatch(/Bitmap/);
  expect(plan).not.toMatch(/Seq Scan on (events|quarantine|prescriptions)\b/);
  // the index of held events by subscription, walked for the feed alone, was the first flip seen
  expect(plan).not.toMatch(/events_held_subscription_idx/);
}

describe.skipIf(!real)('plans on tables without statistics (100,000 held events, 20,000 prescriptions)', () => {
  test('the tables really have no statistics', async () => {
    const [row] = await admin.unsafe<{ n: number }[]>(
      `select count(*)::int as n from pg_stats where schemaname = 'intake_sync' and tablename in ('events', 'quarantine', 'prescriptions')`,
    );
    expect(row?.n).toBe(0);
  });

  test('rematch_held over a 500-key batch: each key one lookup of the held-event index, each event one finding by its key', {
    timeout: 120_000,
  }, async () => {
    const keys = Array.from({ length: 500 }, (_, i) => `held-key-${String(i * 40).padStart(8, '0')}`);
    const plans = await nestedPlans(`select * from intake_sync.rematch_held($1::text[], '{}'::text[], 'default')`, [keys]);
    const held = plans.find((p) => p.includes('held_events AS'));
    expect(held, 'the rematch statement of rematch_held').toBeDefined();
    expectIndexDriven(held as string, [
      'events_held_identity_key_idx',
      'quarantine_feed_key_key',
      'prescriptions_feed_identity_key_idx',
      'events_feed_id_pk',
    ]);
    // the key list drives the lookups (unnest), not an ANY() filter over what an index scan returned
    expect(held).toMatch(/Index Cond: \(identity_key = keys\.key\)/);
  });

  test('rematch_held by eRx id: the held-event index of eRx ids', { timeout: 120_000 }, async () => {
    const plans = await nestedPlans(`select * from intake_sync.rematch_held('{}'::text[], $1::text[], 'default')`, [['erx-2', 'erx-4']]);
    const held = plans.find((p) => p.includes('held_events AS'));
    expectIndexDriven(held as string, ['events_held_erx_message_id_idx']);
  });

  test('the page statement: each event one lookup of the prescriptions by identity and by eRx id', async () => {
    const page = preparePage(
      Array.from({ length: 250 }, (_, i) =>
        event(`page-${i}`, 'accepted', '2024-12-10T10:00:00Z', {
          patient_last_name: `Page${i}`,
          erx_message_id: i % 2 ? `erx-${i}` : null,
        }),
      ),
    );
    const { events, malformed } = pageRowsJson(page);
    const plan = await explain(
      applyPageSql(namesOf(tdb.database.db), {
        feed: 'default',
        expectedVersion: 0,
        nextIterator: 'next',
        receivedAt: new Date().toISOString(),
        eventsJson: events,
        malformedJson: malformed,
        malformedCount: 0,
      }),
    );
    expectIndexDriven(plan, ['prescriptions_feed_identity_key_idx', 'prescriptions_feed_erx_message_id_idx']);
  });

  test("the rematch's walk of held keys: the held-event index in key order", async () => {
    // nextHeldKeys pins enable_bitmapscan off in its transaction
    const plan = await explain(nextHeldKeysSql(namesOf(tdb.database.db), 'default', 'held-key-00001000', 500), {
      enable_bitmapscan: 'off',
    });
    expectIndexDriven(plan, ['events_held_identity_key_idx']);
    // walked in key order and cut at the limit, never sorted
    expect(plan).not.toMatch(/Sort Key/);
  });
});

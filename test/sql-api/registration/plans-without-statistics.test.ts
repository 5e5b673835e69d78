import { describe, expect, test } from 'vitest';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { SQL } from 'drizzle-orm';
import { namesOf } from '../../../src/db/store-names.js';
import { applyPageSql } from '../../../src/sync/apply/page-statement.js';
import { preparePage } from '../../../src/sync/apply/prepare-page.js';
import { pageRowsJson } from '../../../src/sync/apply/page-rows-json.js';
import { nextHeldKeysSql } from '../../../src/operations/matching/rematch-held.js';
import { registrationUpsertSql } from '../../../src/sync/matching/registration-upsert-sql.js';
import { postgresReachable } from '../../support/db.js';
import { expectIndexDriven, nestedPlans, planOf, statisticsRows, usePlanDatabase } from '../../support/sql-api/plans.js';
import { event, identity } from '../../support/sync/fixtures.js';

// Issue 26: the statements that run under the match lock or on a page's path keep their plan on
// tables that have never been analyzed (autovacuum off, or the first minute after a burst): 100,000
// held events with their open findings and 100,000 prescriptions, no statistics at all. auto_explain
// (superuser: LOAD) shows the plans of the statements inside the SQL functions.
const real = await postgresReachable();
const HELD = 100_000;
const PRESCRIPTIONS = 100_000;
const dialect = new PgDialect();

const planDb = usePlanDatabase(real, 'plans_without_statistics', async (admin) => {
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
});

const url = (): string => planDb.url;

/** EXPLAIN of a statement built in TypeScript, with the planner settings its caller pins (`settings`). */
async function explain(statement: SQL, settings: Record<string, string> = {}): Promise<string> {
  const query = dialect.sqlToQuery(statement);
  const rows = await planDb.admin.begin(async (tx) => {
    for (const [name, value] of Object.entries(settings)) await tx.unsafe('select set_config($1, $2, true)', [name, value]);
    return tx.unsafe<{ 'QUERY PLAN': string }[]>(`explain ${query.sql}`, query.params as never[]);
  });
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

describe.skipIf(!real)('plans on tables without statistics (100,000 held events, 100,000 prescriptions)', () => {
  test('the tables really have no statistics', async () => {
    expect(await statisticsRows(planDb.admin, ['events', 'quarantine', 'prescriptions'])).toBe(0);
  });

  test('rematch_held over a 500-key batch: each key one lookup of the held-event index, each event one finding by its key', {
    timeout: 120_000,
  }, async () => {
    const keys = Array.from({ length: 500 }, (_, i) => `held-key-${String(i * 40).padStart(8, '0')}`);
    const plans = await nestedPlans(url(), `select * from intake_sync.rematch_held($1::text[], '{}'::text[], 'default')`, [keys]);
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
    const plans = await nestedPlans(url(), `select * from intake_sync.rematch_held('{}'::text[], $1::text[], 'default')`, [
      ['erx-2', 'erx-4'],
    ]);
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
      applyPageSql(namesOf(planDb.database.db), {
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
    const plan = await explain(nextHeldKeysSql(namesOf(planDb.database.db), 'default', 'held-key-00001000', 500), {
      enable_bitmapscan: 'off',
    });
    expectIndexDriven(plan, ['events_held_identity_key_idx']);
    // walked in key order and cut at the limit, never sorted
    expect(plan).not.toMatch(/Sort Key/);
  });

  test("a registration batch's upsert: each row's old identity one lookup of the unique (feed, external_id) index", async () => {
    // 500 rows as `prescriptions import` sends them: half already registered (their old identity is read)
    const rows = Array.from({ length: 500 }, (_, i) => ({
      external_id: i % 2 ? `rx-${i * 97}` : `new-${i}`,
      patient_first_name: 'a',
      patient_last_name: 'b',
      identity_key: `key-${i}`,
      erx_message_id: null,
    }));
    const plan = await explain(registrationUpsertSql(namesOf(planDb.database.db), 'default', JSON.stringify(rows)));
    expectIndexDriven(plan, ['prescriptions_feed_external_id_key']);
    // the batch's own list drives the lookups, never a walk of the feed's prescriptions joined afterwards
    expect(plan).toMatch(/Index Cond: \(\(feed = 'default'::text\) AND \(external_id = i\.external_id\)\)/);
    expect(plan).not.toMatch(/Hash Join|Merge Join/);
  });

  test('register_prescription: its reads of the prescription by the unique index, its rematch by the held-event index', {
    timeout: 60_000,
  }, async () => {
    const plans = await nestedPlans(url(), `select * from intake_sync.register_prescription('rx-400', $1::text::jsonb, 'default')`, [
      JSON.stringify(identity({ patient_last_name: 'Plans' })),
    ]);
    const previous = planOf(plans, 'SELECT p.identity_key, p.erx_message_id');
    expectIndexDriven(previous, ['prescriptions_feed_external_id_key']);
    expectIndexDriven(planOf(plans, 'held_events AS'), ['events_held_identity_key_idx']);
    // and nothing it ran walked a big table
    for (const plan of plans) expect(plan).not.toMatch(/(Seq Scan|Bitmap Heap Scan) on (events|quarantine|prescriptions)\b/);
  });
});

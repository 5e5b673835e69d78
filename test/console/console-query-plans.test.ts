import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prescriptionSearch } from '../../src/store-api/registration/prescription-calls.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { registerFeeds } from '../../src/db/feed-registry.js';
import { nestedPlans } from '../support/sql-api/plans.js';

const realServer = await postgresReachable();

/**
 * The console's quarantine queries must be index-driven on large tables even before any ANALYZE:
 * autovacuum is off on the test server and the tables are never analyzed, so the planner works from
 * default estimates, which is what a freshly restored or bulk-loaded database looks like.
 */
const SCHEMA = '"intake_sync"';
const SCHEMA_NAME = 'intake_sync';
const GUARDED = new Set(['quarantine', 'events', 'prescriptions']);
const ROWS = 100_000;

/** Every relation a plan reads with a sequential scan. Pure. */
export function seqScans(plan: unknown): string[] {
  const found: string[] = [];
  const walk = (node: unknown) => {
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, unknown>;
    if (n['Node Type'] === 'Seq Scan' && typeof n['Relation Name'] === 'string') found.push(n['Relation Name']);
    for (const value of Object.values(n)) {
      if (Array.isArray(value)) for (const v of value) walk(v);
      else if (value && typeof value === 'object') walk(value);
    }
  };
  walk(plan);
  return found;
}

describe.skipIf(!realServer)(`console quarantine query plans on 100k unanalyzed rows (${NEEDS_POSTGRES})`, () => {
  let tdb: TestDatabase;
  let sql: postgres.Sql;

  beforeAll(async () => {
    tdb = await createTestDatabase('console_plans');
    sql = postgres(tdb.url as string, { max: 1, onnotice: () => {} });
    await registerFeeds(tdb.database.db, ['clinic_a', 'clinic_b'], null);
    await sql.unsafe(`insert into intake_sync.prescriptions (external_id, feed, subscription_id, status, status_rank)
      select 'rx-' || g, case when g % 2 = 0 then 'clinic_a' else 'clinic_b' end, 'sub-' || g, 'received', 1
      from generate_series(1, ${ROWS}) g`);
    await sql.unsafe(`insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version)
      select 'ev-' || g, case when g % 2 = 0 then 'clinic_a' else 'clinic_b' end, 'prescription.received',
        now() - g * interval '1 second', 'sub-' || (g % ${ROWS / 2}), '2024-12-10'
      from generate_series(1, ${ROWS}) g`);
    await sql.unsafe(`insert into intake_sync.quarantine (id, quarantine_key, event_id, feed, reason, detail, first_seen_at, last_seen_at)
      select g, 'ev-' || g, 'ev-' || g, case when g % 2 = 0 then 'clinic_a' else 'clinic_b' end,
        case when g % 3 = 0 then 'ambiguous' else 'unmatched' end, 'no match', now() - g * interval '1 second', now()
      from generate_series(1, ${ROWS}) g`);
    const [never] = await sql`select count(*)::int as n from pg_stat_user_tables
      where schemaname = 'intake_sync' and relname in ('quarantine', 'events', 'prescriptions') and (last_analyze is not null or last_autoanalyze is not null)`;
    expect(never?.n).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await sql?.end({ timeout: 5 });
    await tdb?.drop();
  });

  async function plan(query: string, params: unknown[]): Promise<string[]> {
    const [row] = await sql.unsafe(`explain (format json) ${query}`, params as never[]);
    return seqScans((row as Record<string, unknown>)['QUERY PLAN']).filter((r) => GUARDED.has(r));
  }

  // the filters as quarantine_page, quarantine_count and dismiss_matching take them (the one filter,
  // _quarantine_filter): feed, reason, event name, held_before, search
  const filters: Record<string, (string | null)[]> = {
    'no filter': [null, null, null, null, null],
    feed: ['clinic_a', null, null, null, null],
    'feed and reason': ['clinic_a', 'ambiguous', null, null, null],
    'event name': [null, null, 'prescription.received', null, null],
    age: [null, null, null, new Date(Date.now() - 7 * 86_400_000).toISOString(), null],
    'search by event id': [null, null, null, null, 'ev-77'],
    'search by subscription id': [null, null, null, null, 'sub-77'],
    'search by external_id': [null, null, null, null, 'rx-77'],
  };
  /** The plan of the statement a function builds from the filter (auto_explain: the plan it used). */
  async function innerPlan(call: string, filter: (string | null)[], all: string[] = []): Promise<string> {
    const plans = await nestedPlans(tdb.url as string, call, filter);
    all.push(...plans);
    const inner = plans.filter((p) => p.includes('"intake_sync"."quarantine" q'));
    if (process.env.SHOW_PLANS) console.log(call, filter, inner.join('\n'));
    expect(inner.length, call).toBeGreaterThan(0);
    return inner.join('\n');
  }
  const PAGE = 'select * from intake_sync.quarantine_page($1, $2, $3, $4::timestamptz, $5, null, null, null, 51, false)';
  const COUNT = 'select * from intake_sync.quarantine_count($1, $2, $3, $4::timestamptz, $5)';
  const DISMISS = `select * from intake_sync.dismiss_matching($1, $2, $3, $4::timestamptz, $5, 1000000, 'operator_test', 100)`;

  for (const [name, filter] of Object.entries(filters)) {
    it(`the quarantine list (${name}) reads no table sequentially`, async () => {
      const all: string[] = [];
      const plan = await innerPlan(PAGE, filter, all);
      expect(all.join('\n')).not.toMatch(/Seq Scan on (quarantine|events|prescriptions)\b/);
      if (filter[4] !== null) {
        // a Search finds its findings by index (_quarantine_filter) and reads them by id: it never
        // walks every open finding in order
        expect(all.join('\n')).toContain('quarantine_open_event_idx');
        expect(all.join('\n')).toContain('events_subscription_feed_idx');
        expect(plan).toContain('quarantine_pkey');
        expect(plan).not.toContain('quarantine_open_held_idx');
      } else if (filter[0] !== null && filter[1] !== null) {
        // feed and reason: the range of quarantine_open_reason_idx (0035) in its order, never a walk of
        // every open finding of the feed, nor a sort
        expect(plan).toContain('quarantine_open_reason_idx');
        expect(plan).not.toMatch(/Sort Key|quarantine_open_held_idx/);
      } else expect(plan).toContain('quarantine_open_held_idx');
    });
    it(`the dismiss-all batch (${name}) reads no table sequentially`, async () => {
      expect(await innerPlan(DISMISS, filter)).not.toMatch(/Seq Scan on (quarantine|events|prescriptions)\b/);
    });
  }

  // counting every open finding has to visit all of them; a narrowing filter must not
  for (const name of ['feed and reason', 'search by event id', 'search by subscription id', 'search by external_id']) {
    it(`the dismiss-all count (${name}) reads no table sequentially`, async () => {
      expect(await innerPlan(COUNT, filters[name] as (string | null)[])).not.toMatch(/Seq Scan on (quarantine|events|prescriptions)\b/);
    });
  }

  it("the prescription page's subscriptions (prescription_subscriptions) read no table sequentially", async () => {
    const plans = await nestedPlans(tdb.url as string, 'select * from intake_sync.prescription_subscriptions($1, $2)', [
      'clinic_a',
      'rx-77',
    ]);
    expect(plans.join('\n')).not.toMatch(/Seq Scan on (quarantine|events|prescriptions|subscription_links)\b/);
    expect(plans.join('\n')).toContain('prescriptions_feed_external_id_key');
  });

  it('the prescriptions search (external_id prefix) narrows by index through the barrier view', async () => {
    const search = prescriptionSearch(SCHEMA_NAME, 'rx-77');
    expect(await plan(search.text, search.params)).toEqual([]);
    const [row] = await sql.unsafe(`explain (format json) ${search.text}`, search.params as never[]);
    // the prefix must be an index condition, not a filter applied while walking the whole index
    expect(JSON.stringify((row as Record<string, unknown>)['QUERY PLAN'])).toMatch(/"Index Cond":"[^"]*external_id ~>=~/);
    const found = await sql.unsafe<{ external_id: string }[]>(search.text, search.params as never[]);
    // the same rows as the plain LIKE alone (the range only narrows)
    const plain = await sql.unsafe<{ external_id: string }[]>(
      `select external_id from intake_sync.prescriptions where external_id like 'rx-77%' order by external_id, feed limit 50`,
    );
    expect(found).toHaveLength(50);
    expect(found.map((r) => r.external_id)).toEqual(plain.map((r) => r.external_id));
  });

  it('the walker finds a sequential scan when there is one (the check can fail)', async () => {
    expect(await plan(`select count(*) from ${SCHEMA}.quarantine q where q.detail = $1`, ['x'])).toEqual(['quarantine']);
  });
});

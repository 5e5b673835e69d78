import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prescriptionSearch } from '../../src/console/pages/prescriptions.js';
import { filterClause, type QuarantineFilter } from '../../src/console/quarantine-filter.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../helpers/db.js';

const realServer = await postgresReachable();

/**
 * The console's quarantine queries must be index-driven on large tables even before any ANALYZE:
 * autovacuum is off on the test server and the tables are never analyzed, so the planner works from
 * default estimates, which is what a freshly restored or bulk-loaded database looks like.
 */
const SCHEMA = '"intake_sync"';
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

  const now = new Date();
  const filters: Record<string, QuarantineFilter> = {
    'no filter': {},
    feed: { feed: 'clinic_a' },
    'feed and reason': { feed: 'clinic_a', reason: 'ambiguous' },
    'event name': { eventName: 'prescription.received' },
    age: { age: '7d' },
    'search by event id': { search: 'ev-77' },
    'search by subscription id': { search: 'sub-77' },
    'search by external_id': { search: 'rx-77' },
  };

  for (const [name, filter] of Object.entries(filters)) {
    it(`the quarantine list (${name}) reads no table sequentially`, async () => {
      const { where, params } = filterClause(filter, SCHEMA, now);
      const query = `select q.feed, q.event_id, q.quarantine_key, q.subscription_id from ${SCHEMA}.quarantine_open q
        where ${where} order by q.held_since, q.feed, q.quarantine_key limit 51`;
      expect(await plan(query, params)).toEqual([]);
    });
    it(`the dismiss-all batch (${name}) reads no table sequentially`, async () => {
      const { where, params } = filterClause(filter, SCHEMA, now);
      const query = `select q.feed, q.quarantine_key from ${SCHEMA}.quarantine_open q where ${where}
        order by q.held_since, q.feed, q.quarantine_key limit 500`;
      expect(await plan(query, params)).toEqual([]);
    });
  }

  // counting every open finding has to visit all of them; a narrowing filter must not
  for (const name of ['feed and reason', 'search by event id', 'search by subscription id', 'search by external_id']) {
    it(`the dismiss-all count (${name}) reads no table sequentially`, async () => {
      const { where, params } = filterClause(filters[name] as QuarantineFilter, SCHEMA, now);
      expect(await plan(`select count(*) as n from ${SCHEMA}.quarantine_open q where ${where}`, params)).toEqual([]);
    });
  }

  it('the prescription page findings query reads no table sequentially', async () => {
    const query = `select feed, quarantine_key from ${SCHEMA}.quarantine_open where feed = $1 and subscription_id = $2 order by held_since limit 200`;
    expect(await plan(query, ['clinic_a', 'sub-77'])).toEqual([]);
  });

  it('the prescriptions search (external_id prefix) narrows by index through the barrier view', async () => {
    const search = prescriptionSearch(SCHEMA, 'rx-77');
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

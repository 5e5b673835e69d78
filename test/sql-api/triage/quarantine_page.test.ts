import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantsScript } from '../../../src/db/grants-script.js';
import { registerFeeds } from '../../../src/db/feed-registry.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase, urlAs } from '../../support/db.js';
import { useLoginRoles } from '../../support/login-roles.js';
import { clearStatistics, nestedPlans, planOf } from '../../support/sql-api/plans.js';

// quarantine_page(): the console's quarantine list, one keyset page filtered and ordered inside the
// function (issue 29 §8). As an app role granted clinic_a only: its own findings, in the view's order,
// bounded arguments named, and with no statistics on 100k findings a walk of quarantine_open_held_idx
// that stops at the page's size (no sort of every visible finding).

const reachable = await postgresReachable();
const APP = `qpage_app_${process.pid}`;
const ROWS = 100_000;

describe.skipIf(!reachable)(`quarantine_page() as an app role (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  useLoginRoles([APP]);
  let tdb: TestDatabase;
  let owner: postgres.Sql;
  let app: postgres.Sql;
  beforeAll(async () => {
    tdb = await createTestDatabase('quarantine_page');
    await registerFeeds(tdb.database.db, ['clinic_a', 'clinic_b'], null);
    owner = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
    await owner.unsafe(grantsScript('app', 'intake_sync', APP, { kind: 'feeds', feeds: ['clinic_a'] }).join('\n'));
    app = postgres(urlAs(tdb.url ?? '', APP), { max: 1, onnotice: () => {} });
    await owner.unsafe(`insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version)
      select 'ev-' || g, case when g % 2 = 0 then 'clinic_a' else 'clinic_b' end, case when g % 5 = 0 then 'ordered' else 'accepted' end,
        now() - g * interval '1 second', 'sub-' || (g % 1000), '2024-12-10'
      from generate_series(1, ${ROWS}) g`);
    await owner.unsafe(`insert into intake_sync.quarantine (id, quarantine_key, event_id, feed, reason, detail, first_seen_at, last_seen_at)
      select g, 'ev-' || g, 'ev-' || g, case when g % 2 = 0 then 'clinic_a' else 'clinic_b' end,
        case when g % 3 = 0 then 'ambiguous' else 'unmatched' end, 'no match', now() - (g % 5000) * interval '1 second', now()
      from generate_series(1, ${ROWS}) g`);
    await clearStatistics(owner);
  }, 120_000);
  afterAll(async () => {
    await app?.end();
    await owner?.unsafe(`drop owned by "${APP}"`).catch(() => {});
    await owner?.end();
    await tdb?.drop();
  });

  // held_key: the position's time as text, to the microsecond, sent as text (postgres.js sends a
  // timestamptz parameter through a JS Date, which cuts it to the millisecond)
  type Row = { feed: string; quarantine_key: string; held_key: string; event_name: string; subscription_id: string };
  const page = (args: { feed?: string; reason?: string; eventName?: string; search?: string; after?: Row; rows?: number }) =>
    app<Row[]>`select feed, quarantine_key, held_since::text as held_key, event_name, subscription_id from intake_sync.quarantine_page(
      ${args.feed ?? null}, ${args.reason ?? null}, ${args.eventName ?? null}, null, ${args.search ?? null},
      ${args.after?.held_key ?? null}::text::timestamptz, ${args.after?.feed ?? null}, ${args.after?.quarantine_key ?? null}, ${args.rows ?? 50})`;

  it('pages through its own feed only, in the view order, and the pages join up', async () => {
    const first = await page({ rows: 200 });
    const second = await page({ rows: 200, after: first.at(-1) });
    const expected = await app<{ quarantine_key: string }[]>`select quarantine_key from intake_sync.quarantine_open
      order by held_since, feed, quarantine_key limit 400`;
    const got = [...first, ...second].map((r) => r.quarantine_key);
    const want = expected.map((r) => r.quarantine_key);
    // many findings share a held_since here: the position must cut inside a run of equal times
    expect(got).toEqual(want);
    expect(new Set([...first, ...second].map((r) => r.feed))).toEqual(new Set(['clinic_a']));
    // the other feed, asked for by name or searched for: nothing
    expect(await page({ feed: 'clinic_b' })).toEqual([]);
    expect(await page({ search: 'ev-1' })).toEqual([]);
  });

  it('filters by reason, event name and search (event id, subscription id)', async () => {
    for (const r of await page({ reason: 'ambiguous', eventName: 'ordered' })) expect(r.event_name).toBe('ordered');
    expect((await page({ search: 'ev-10' })).map((r) => r.quarantine_key)).toEqual(['ev-10']);
    const bySubscription = await page({ search: 'sub-42', rows: 500 });
    expect(bySubscription.length).toBeGreaterThan(0);
    for (const r of bySubscription) expect(r.subscription_id).toBe('sub-42');
  });

  it('names a bad argument and reads nothing', async () => {
    await expect(page({ rows: 0 })).rejects.toMatchObject({ code: '22023', message: expect.stringContaining('max_rows') });
    await expect(page({ search: 'x'.repeat(513) })).rejects.toMatchObject({ code: '22001', message: expect.stringContaining('search') });
    await expect(page({ reason: 'nope' })).rejects.toMatchObject({ code: '22023', message: expect.stringContaining('in_reason') });
    await expect(app`select * from intake_sync.quarantine_page(null, null, null, null, null, now(), null, null, 50)`).rejects.toMatchObject(
      { code: '22023', message: expect.stringContaining('after_key') },
    );
  });

  it('with no statistics, a page walks quarantine_open_held_idx and sorts nothing', async () => {
    await clearStatistics(owner);
    // auto_explain is loaded by the superuser; the page runs as the app role (its feeds, its plan)
    const plans = await nestedPlans(
      tdb.url ?? '',
      `set local role "${APP}"; select * from intake_sync.quarantine_page(null, null, null, null, null, null, null, null, 51)`,
    );
    const plan = planOf(plans, 'ORDER BY q.first_seen_at');
    expect(plan).toContain('quarantine_open_held_idx');
    expect(plan).toMatch(/^Limit/m);
    expect(plan).not.toMatch(/Sort|Seq Scan on (quarantine|events)\b/);
  });
});

import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityOf, samplePrescription } from '../../../src/sandbox/fixtures.js';
import { NEEDS_POSTGRES, postgresReachable } from '../../support/db.js';
import { FEED_A, FEED_B, type TwoClinics, twoClinics } from '../../support/sql-api/two-clinics.js';

// Issue 25 §1: a feed-filtered view must be a security_barrier view, or the caller's own WHERE
// (a failing cast, a function that raises a notice) runs on rows the feed filter would remove.
// Every clinic-b value written here carries CANARY; no error or notice an app role granted
// clinic-a can provoke may contain it.
const CANARY = 'LEAKB';
const reachable = await postgresReachable();

/** The views of the schema that filter by feed, read from the catalog (not a list kept by hand). */
const FEED_FILTERED_VIEWS = `
  select c.relname as name, coalesce(c.reloptions, '{}') as options
  from pg_class c join pg_namespace n on n.oid = c.relnamespace
  where n.nspname = 'intake_sync' and c.relkind = 'v'
    and pg_get_viewdef(c.oid) ~ '_visible_feeds|_feed_visible'
  order by 1`;

describe.skipIf(!reachable)(`feed-filtered views are security barriers (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let db: TwoClinics;
  let views: string[];

  beforeAll(async () => {
    db = await twoClinics('views_barrier');
    const { owner } = db;
    for (const [i, feed] of [FEED_A, FEED_B].entries()) {
      const tag = feed === FEED_B ? CANARY : 'clina';
      const rx = samplePrescription(i + 1, { prefix: `${tag}-rx` });
      await owner`select intake_sync.register_prescription(${rx.external_id}, ${JSON.stringify(identityOf(rx))}::text::jsonb, ${feed})`;
      await owner`select intake_sync.send_prescription(${JSON.stringify(rx)}::text::jsonb, ${feed})`;
      await owner`update intake_sync.outbox set last_error = ${`${tag}-error`} where feed = ${feed}`;
      await owner`insert into intake_sync.quarantine (quarantine_key, event_id, feed, reason, detail)
        values (${`${tag}-key`}, ${`${tag}-event`}, ${feed}, 'unmatched', ${`${tag}-detail`})`;
    }
    views = (await owner.unsafe(FEED_FILTERED_VIEWS)).map((r) => r.name as string);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('finds the feed-filtered views of the public API, and every one is a security_barrier view', async () => {
    expect(views).toEqual(expect.arrayContaining(['outbox_status', 'prescription_status', 'quarantine_open']));
    const rows = await db.owner.unsafe(FEED_FILTERED_VIEWS);
    const notBarriers = rows.filter((r) => !(r.options as string[]).includes('security_barrier=true')).map((r) => r.name);
    expect(notBarriers, 'feed-filtered views without WITH (security_barrier)').toEqual([]);
  });

  it('every view an app role may read that has a feed column filters by feed', async () => {
    const readable = await db.owner.unsafe(
      `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'intake_sync' and c.relkind = 'v' and has_table_privilege($1, c.oid, 'SELECT')
         and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'feed')
       order by 1`,
      [db.appRole],
    );
    expect(readable.length).toBeGreaterThan(0);
    for (const { name } of readable) expect(views, `${name} has a feed column: it must filter by feed`).toContain(name);
  });

  /** The text-typed columns of a view, as the app role sees it. */
  const textColumns = async (sql: postgres.Sql, view: string) =>
    (
      await sql.unsafe(
        `select a.attname as name from pg_attribute a
         where a.attrelid = ('intake_sync.' || quote_ident($1))::regclass and a.attnum > 0 and not a.attisdropped
           and a.atttypid = 'text'::regtype order by a.attnum`,
        [view],
      )
    ).map((r) => r.name as string);

  it('the cast-error attack on every text column of every such view prints no clinic-b value', async () => {
    const app = db.as();
    let attempts = 0;
    for (const view of views) {
      const columns = await textColumns(app, view);
      expect(columns.length, `${view} has text columns`).toBeGreaterThan(0);
      for (const column of columns) {
        attempts++;
        const outcome = await app.unsafe(`select 1 from intake_sync.${view} where feed = '${FEED_B}' and ${column}::int = 0`).then(
          () => 'no rows reached the cast',
          (error: Error) => error.message,
        );
        expect(outcome, `${view}.${column}`).not.toContain(CANARY);
        // the filter ran first: no clinic-b row reached the caller's cast
        expect(outcome, `${view}.${column}`).toBe('no rows reached the cast');
      }
    }
    expect(attempts).toBeGreaterThanOrEqual(views.length);
  });

  it('a cheap leaky pg_temp function in WHERE (raise notice) sees no clinic-b row of any such view', async () => {
    const notices: string[] = [];
    const app = db.as(undefined, (notice) => notices.push(String(notice.message)));
    await app.unsafe(`create function pg_temp.leak(v text) returns boolean language plpgsql cost 0.0000001 as
      $$ begin raise notice 'leaked: %', v; return true; end $$`);
    for (const view of views) {
      // a whole row and every text column, alone and beside the caller's own (leakproof) feed predicate
      await app.unsafe(`select 1 from intake_sync.${view} v where pg_temp.leak(v::text)`);
      await app.unsafe(`select 1 from intake_sync.${view} v where feed = '${FEED_B}' and pg_temp.leak(v::text)`);
      for (const column of await textColumns(app, view)) {
        await app.unsafe(`select 1 from intake_sync.${view} where pg_temp.leak(${column})`);
      }
    }
    // the function did run, on clinic-a's rows: the test would see a leak
    expect(notices.some((n) => n.includes('clina'))).toBe(true);
    expect(notices.filter((n) => n.includes(CANARY))).toEqual([]);
  });

  it.each([
    ['prescription_status', 'external_id', 'prescriptions_feed_external_id_key'],
    ['outbox_status', 'external_id', 'outbox_feed_external_id_idx'],
  ])('%s by feed and %s is still an index scan through the barrier (e.g. %s)', async (view, column) => {
    const app = db.as();
    const plan = await app.begin(async (tx) => {
      // the tables are tiny: only whether the index is usable through the barrier is in question
      await tx.unsafe('set local enable_seqscan = off');
      return (await tx.unsafe(`explain (costs off) select * from intake_sync.${view} where feed = '${FEED_A}' and ${column} = 'x'`))
        .map((r) => r['QUERY PLAN'] as string)
        .join('\n');
    });
    // the caller's leakproof equalities are pushed below the barrier, into the base table's index
    // scan (a qual the barrier holds back shows as a Subquery Scan filtering above it)
    expect(plan).toMatch(/Index (Only )?Scan using \S+ on /);
    expect(plan).toContain(`${column} = 'x'::text`);
    expect(plan).not.toContain('Subquery Scan');
  });
});

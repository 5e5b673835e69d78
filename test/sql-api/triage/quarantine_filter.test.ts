import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantsScript } from '../../../src/db/grants-script.js';
import { registerFeeds } from '../../../src/db/feed-registry.js';
import { QUARANTINE_REASONS } from '../../../src/store-api/triage/vocabulary.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase, urlAs } from '../../support/db.js';
import { useLoginRoles } from '../../support/login-roles.js';

// The one quarantine filter (_quarantine_filter; issue 32 §2, issue 34 §5): the list (quarantine_page),
// its count (quarantine_count) and Dismiss all matching (dismiss_matching) agree on every filter,
// every finding reason included, as an app role granted clinic_a only; and the bulk action closes
// exactly the findings counted: one arriving after the count stays open and is reported.

const reachable = await postgresReachable();
const APP = `qfilter_app_${process.pid}`;
const HELD_BEFORE = '2026-01-01T00:00:00.000Z';

interface Filter {
  feed?: string;
  reason?: string;
  eventName?: string;
  heldBefore?: string;
  search?: string;
}

describe.skipIf(!reachable)(
  `the quarantine filter, shared by list, count and bulk dismiss (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`,
  () => {
    useLoginRoles([APP]);
    let tdb: TestDatabase;
    let owner: postgres.Sql;
    let app: postgres.Sql;
    let app2: postgres.Sql;
    beforeAll(async () => {
      tdb = await createTestDatabase('quarantine_filter');
      await registerFeeds(tdb.database.db, ['clinic_a', 'clinic_b'], null);
      owner = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
      await owner.unsafe(grantsScript('app', 'intake_sync', APP, { kind: 'feeds', feeds: ['clinic_a'] }).join('\n'));
      app = postgres(urlAs(tdb.url ?? '', APP), { max: 1, onnotice: () => {} });
      app2 = postgres(urlAs(tdb.url ?? '', APP), { max: 1, onnotice: () => {} });
      // 96 events on two feeds: every reason, two names, 12 subscriptions, half held before HELD_BEFORE;
      // malformed findings have no event (as the page apply writes them)
      await owner.unsafe(`insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version, received_at)
      select 'ev-' || g, case when (g / 4) % 2 = 0 then 'clinic_a' else 'clinic_b' end, case when g % 3 = 0 then 'ordered' else 'accepted' end,
        '2025-06-01'::timestamptz + g * interval '1 minute', 'sub-' || (g % 12), '2024-12-10', now()
      from generate_series(1, 96) g where g % 4 <> 2`);
      await owner.unsafe(`insert into intake_sync.quarantine (quarantine_key, event_id, feed, reason, detail, first_seen_at, last_seen_at)
      select case when g % 4 = 2 then 'bad-' || g else 'ev-' || g end, case when g % 4 = 2 then null else 'ev-' || g end,
        case when (g / 4) % 2 = 0 then 'clinic_a' else 'clinic_b' end,
        (array['unmatched', 'ambiguous', 'malformed', 'unsupported_version'])[g % 4 + 1], 'held',
        case when (g / 8) % 2 = 0 then '2025-06-01'::timestamptz else '2026-06-01'::timestamptz end + g * interval '1 second', now()
      from generate_series(1, 96) g`);
      // a local prescription linked to sub-4, found by its external_id
      await owner.unsafe(
        `insert into intake_sync.prescriptions (external_id, feed, subscription_id) values ('rx-sub-4', 'clinic_a', 'sub-4')`,
      );
    }, 120_000);
    afterAll(async () => {
      await app?.end();
      await app2?.end();
      await owner?.unsafe(`drop owned by "${APP}"`).catch(() => {});
      await owner?.end();
      await tdb?.drop();
    });

    const args = (f: Filter) => [f.feed ?? null, f.reason ?? null, f.eventName ?? null, f.heldBefore ?? null, f.search ?? null];
    /** Every page of the list, forward, 7 rows a page (so the positions are used). */
    async function list(sql: postgres.Sql, f: Filter): Promise<string[]> {
      const keys: string[] = [];
      let after: { held: string; feed: string; key: string } | undefined;
      for (;;) {
        const rows = await sql.unsafe<{ feed: string; quarantine_key: string; held: string }[]>(
          `select feed, quarantine_key, held_since::text as held from intake_sync.quarantine_page($1, $2, $3, $4::timestamptz, $5,
           $6::text::timestamptz, $7, $8, 7, false)`,
          [...args(f), after?.held ?? null, after?.feed ?? null, after?.key ?? null] as never[],
        );
        keys.push(...rows.map((r) => `${r.feed}/${r.quarantine_key}`));
        const last = rows.at(-1);
        if (rows.length < 7 || !last) return keys;
        after = { held: last.held, feed: last.feed, key: last.quarantine_key };
      }
    }
    async function count(sql: postgres.Sql, f: Filter): Promise<{ matching: number; asOf: string }> {
      const [row] = await sql.unsafe<{ matching: string; as_of: string }[]>(
        'select matching, as_of from intake_sync.quarantine_count($1, $2, $3, $4::timestamptz, $5)',
        args(f) as never[],
      );
      return { matching: Number(row?.matching), asOf: String(row?.as_of) };
    }
    const openKeys = async (sql: postgres.Sql | postgres.TransactionSql) =>
      (await sql<{ k: string }[]>`select feed || '/' || quarantine_key as k from intake_sync.quarantine_open`).map((r) => r.k);
    /** Dismiss all matching in a transaction that is rolled back: the findings it closed, batch by batch. */
    async function dismissedBy(f: Filter, asOf: string): Promise<string[]> {
      let closed: string[] = [];
      await app
        .begin(async (tx) => {
          const before = await openKeys(tx);
          for (;;) {
            const [r] = await tx.unsafe<{ dismissed: number }[]>(
              'select dismissed from intake_sync.dismiss_matching($1, $2, $3, $4::timestamptz, $5, $6, $7, 5)',
              [...args(f), asOf, 'operator_test'] as never[],
            );
            if ((r?.dismissed ?? 0) < 5) break;
          }
          const after = new Set(await openKeys(tx));
          closed = before.filter((k) => !after.has(k));
          throw new Error('roll back');
        })
        .catch((e: Error) => {
          if (e.message !== 'roll back') throw e;
        });
      return closed;
    }

    const FILTERS: Filter[] = [
      {},
      { feed: 'clinic_a' },
      ...QUARANTINE_REASONS.map((reason) => ({ reason })),
      ...QUARANTINE_REASONS.map((reason) => ({ feed: 'clinic_a', reason, heldBefore: HELD_BEFORE })),
      { eventName: 'ordered' },
      { eventName: 'accepted', reason: 'unmatched' },
      { heldBefore: HELD_BEFORE },
      { search: 'ev-1' },
      { search: 'ev-5' },
      { search: 'sub-4' },
      { search: 'rx-sub-4' },
      { search: 'bad-2' },
      { search: 'sub-4', eventName: 'ordered' },
    ];

    it.each(FILTERS.map((f) => [JSON.stringify(f), f] as const))('list, count and Dismiss all matching agree: %s', async (_, f) => {
      const shown = await list(app, f);
      const { matching, asOf } = await count(app, f);
      const closed = await dismissedBy(f, asOf);
      expect(matching).toBe(shown.length);
      expect(new Set(closed)).toEqual(new Set(shown));
      expect(closed).toHaveLength(shown.length);
      // only the caller's feed, whatever the filter asked
      for (const k of shown) expect(k.startsWith('clinic_a/')).toBe(true);
    });

    it('every finding reason the page apply writes is a reason of the SQL vocabulary, and each filters', async () => {
      const [row] = await app<{ reasons: string[] }[]>`select intake_sync.quarantine_reasons() as reasons`;
      expect([...(row?.reasons ?? [])].sort()).toEqual([...QUARANTINE_REASONS].sort());
      for (const reason of QUARANTINE_REASONS) expect((await count(app, { reason })).matching).toBeGreaterThan(0);
      await expect(count(app, { reason: 'nope' })).rejects.toMatchObject({
        code: '22023',
        message: expect.stringContaining('unsupported_version'),
      });
    });

    it('counts at most at_most when given (the list says "more than"), and names a bad one', async () => {
      const [row] = await app<{ matching: string }[]>`select matching from intake_sync.quarantine_count(null, null, null, null, null, 3)`;
      expect(Number(row?.matching)).toBe(3);
      await expect(app`select * from intake_sync.quarantine_count(null, null, null, null, null, 0)`).rejects.toMatchObject({
        code: '22023',
        message: expect.stringContaining('at_most'),
      });
    });

    it('pages backward to the same rows as forward', async () => {
      const forward = await list(app, {});
      const rows = await app.unsafe<{ feed: string; quarantine_key: string }[]>(
        `select feed, quarantine_key from intake_sync.quarantine_page(null, null, null, null, null,
         (select held_since from intake_sync.quarantine_open where feed || '/' || quarantine_key = $1), 'clinic_a', $2, 5, true)`,
        [forward[10] ?? '', (forward[10] ?? '').split('/')[1] ?? ''],
      );
      expect(rows.map((r) => `${r.feed}/${r.quarantine_key}`).reverse()).toEqual(forward.slice(5, 10));
    });

    it('closes exactly the findings counted: one that arrives after the count stays open and is reported, one closed meanwhile is not touched', async () => {
      const f = { feed: 'clinic_a', reason: 'unmatched' };
      const { matching, asOf } = await count(app, f);
      expect(matching).toBeGreaterThan(2);
      const counted = await list(app, f);
      // explicit ordering, no sleeps: another transaction holds clinic_a's match lock, so the dismissal
      // starts and waits for it; meanwhile a finding arrives and a counted one is closed (both commit);
      // then the lock is released and the dismissal reads the findings after it, the late one included
      const locker = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
      let release!: () => void;
      const released = new Promise<void>((r) => {
        release = r;
      });
      let lockHeld!: () => void;
      const held = new Promise<void>((r) => {
        lockHeld = r;
      });
      const holding = locker.begin(async (tx) => {
        await tx`select intake_sync._feed_lock('clinic_a', 'match', true)`;
        lockHeld();
        await released;
      });
      await held;
      const dismissal = app2.begin((tx) =>
        tx.unsafe<{ dismissed: number; left_open: string | null }[]>(
          'select dismissed, left_open from intake_sync.dismiss_matching($1, $2, null, null, null, $3, $4, 1000)',
          ['clinic_a', 'unmatched', asOf, 'operator_test'],
        ),
      );
      // until the dismissal waits on the lock (each turn one round trip to the server, no timer)
      for (;;) {
        const waiting = await owner<{ n: number }[]>`select count(*)::int as n from pg_stat_activity
        where usename = ${APP} and wait_event_type = 'Lock' and query like '%dismiss_matching%'`;
        if ((waiting[0]?.n ?? 0) > 0) break;
      }
      const closedMeanwhile = counted[0]?.split('/')[1] ?? '';
      await owner`update intake_sync.quarantine set resolved_at = now(), resolution = 'matched'
      where feed = 'clinic_a' and quarantine_key = ${closedMeanwhile}`;
      await owner.unsafe(`insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version)
      values ('ev-late', 'clinic_a', 'accepted', now(), 'sub-late', '2024-12-10')`);
      await owner.unsafe(`insert into intake_sync.quarantine (quarantine_key, event_id, feed, reason, detail, first_seen_at, last_seen_at)
      values ('ev-late', 'ev-late', 'clinic_a', 'unmatched', 'held', '2025-01-01', now())`);
      release();
      await holding;
      await locker.end();
      const result = await dismissal;
      expect(result[0]?.dismissed).toBe(matching - 1);
      expect(Number(result[0]?.left_open)).toBe(1);
      const open = await openKeys(app);
      expect(open).toContain('clinic_a/ev-late');
      for (const k of counted) expect(open).not.toContain(k);
      const [audit] = await owner<{ n: number }[]>`select count(*)::int as n from intake_sync.audit_entries
      where action = 'quarantine.dismiss' and detail->>'dismiss_all' = 'true'`;
      expect(audit?.n).toBe(matching - 1);
    });

    it('names a bad argument and closes nothing', async () => {
      const call = (asOf: string | null, reason: string | null, rows: number) =>
        app.begin((tx) =>
          tx.unsafe('select * from intake_sync.dismiss_matching(null, null, null, null, null, $1, $2, $3)', [asOf, reason, rows]),
        );
      await expect(call(null, 'operator_test', 10)).rejects.toMatchObject({ code: '22023', message: expect.stringContaining('as_of') });
      await expect(call('1', null, 10)).rejects.toMatchObject({ code: '23502', message: expect.stringContaining('reason') });
      await expect(call('1', 'Not A Code', 10)).rejects.toMatchObject({ code: '22023', message: expect.stringContaining('reason') });
      await expect(call('1', 'operator_test', 0)).rejects.toMatchObject({ code: '22023', message: expect.stringContaining('max_rows') });
      // another feed, asked for by name: nothing listed or counted, the bulk action refused
      expect(await list(app, { feed: 'clinic_b' })).toEqual([]);
      expect((await count(app, { feed: 'clinic_b' })).matching).toBe(0);
      await expect(
        app.begin((tx) =>
          tx.unsafe(`select * from intake_sync.dismiss_matching('clinic_b', null, null, null, null, 1000, 'operator_test', 10)`),
        ),
      ).rejects.toMatchObject({ code: '42501' });
    });
  },
);

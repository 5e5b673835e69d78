import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEEDS_POSTGRES, postgresReachable } from '../../support/db.js';
import { FEED_A, FEED_B, type TwoClinics, twoClinics } from '../../support/sql-api/two-clinics.js';

// Issue 25 §6: a role that sees some feeds polls the change feed by its feeds' own commits
// (change_commit_feeds, by feed and commit_seq), with its visible feeds computed once, so a
// caught-up poll of a quiet feed never reads a busy feed's changes. The plan must hold on tables
// without statistics (autovacuum is off here and on a fresh install): nothing is ANALYZEd.
const reachable = await postgresReachable();
const BUSY_COMMITS = 200;
const PER_COMMIT = 10;

interface Change {
  cursor: string;
  external_id: string;
  new_status: string;
  feed: string;
}

describe.skipIf(!reachable)(
  `status_changes_since of one feed beside a busy one (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`,
  () => {
    let db: TwoClinics;
    let app: postgres.Sql;
    const poll = (cursor: string | null, max = 1000) =>
      app<Change[]>`select cursor, external_id, new_status, feed from intake_sync.status_changes_since(${cursor}, ${max})`;

    /** Inserts prescriptions with a status (each transaction is one commit of the change feed). */
    const commit = (feed: string, prefix: string, count: number, status = 'accepted') =>
      db.owner.unsafe(
        `insert into intake_sync.prescriptions (external_id, patient_first_name, patient_last_name, patient_state, patient_dob,
         prescriber_npi, written_date, drug_ndc, identity_key, status, feed)
       select $1 || '-' || g, 'F', 'L', 'CA', '1980-01-01', '1234567890', '2024-01-01', '00000000000', $1 || g, $3, $2
       from generate_series(1, $4::int) g`,
        [prefix, feed, status, count],
      );

    beforeAll(async () => {
      db = await twoClinics('changes_isolation');
      app = db.as();
      await commit(FEED_A, 'a1', 3);
      for (let i = 0; i < BUSY_COMMITS; i++) await commit(FEED_B, `b${i}`, PER_COMMIT);
    });
    afterAll(async () => {
      await db?.close();
    });

    it("returns the caller's feed only, in commit order, and follows it across the busy feed's commits", async () => {
      const first = await poll(null);
      expect(first.map((c) => c.feed)).toEqual([FEED_A, FEED_A, FEED_A]);
      const caughtUp = first.at(-1)?.cursor ?? null;
      expect(await poll(caughtUp)).toEqual([]);
      // one transaction touching both feeds, then the quiet feed alone
      await db.owner.begin(async (tx) => {
        await tx.unsafe(`update intake_sync.prescriptions set status = 'ordered' where external_id in ('a1-1', 'b0-1')`);
      });
      await commit(FEED_B, 'b-late', 5);
      await commit(FEED_A, 'a2', 2);
      const next = await poll(caughtUp);
      expect(next.map((c) => [c.feed, c.external_id, c.new_status])).toEqual([
        [FEED_A, 'a1-1', 'ordered'],
        [FEED_A, 'a2-1', 'accepted'],
        [FEED_A, 'a2-2', 'accepted'],
      ]);
      // a max_rows page stops mid-way and resumes exactly
      const [one] = await poll(caughtUp, 1);
      expect((await poll(one?.cursor ?? null)).map((c) => c.external_id)).toEqual(['a2-1', 'a2-2']);
      // the owner (every feed) still sees both feeds, in one commit order
      const everything = await db.owner<Change[]>`select cursor, feed from intake_sync.status_changes_since(${caughtUp}, 10000)`;
      expect(new Set(everything.map((c) => c.feed))).toEqual(new Set([FEED_A, FEED_B]));
      // the quiet cursor predates the busy feed: the owner reads its changes too
      expect(everything).toHaveLength(BUSY_COMMITS * PER_COMMIT + 1 + 1 + 5 + 2);
    });

    it('a caught-up poll is index scans of its own feed with no statistics: no scan of the busy feed, no check per row', async () => {
      const stats = await db.owner`select count(*)::int as n from pg_stats where schemaname = 'intake_sync'
      and tablename in ('status_changes', 'change_commits', 'change_commit_feeds')`;
      expect(stats[0]?.n, 'no statistics were gathered').toBe(0);
      const latest = (await poll(null, 10000)).at(-1)?.cursor ?? null;
      const plans: string[] = [];
      // auto_explain needs a superuser to load: the owner's session takes the app role after it
      const explainer = db.as('postgres', (notice) => plans.push(String(notice.message)));
      await explainer.unsafe(`load 'auto_explain'`);
      await explainer.unsafe(
        `set auto_explain.log_min_duration = 0; set auto_explain.log_nested_statements = on;
       set auto_explain.log_analyze = on; set auto_explain.log_timing = off; set client_min_messages = log`,
      );
      await explainer.unsafe(`set role "${db.appRole}"`);
      const rows = await explainer`select * from intake_sync.status_changes_since(${latest}, 1000)`;
      expect(rows).toEqual([]);
      const plan = plans.find((p) => p.includes('change_commit_feeds')) ?? plans.join('\n');
      expect(plan).toMatch(/Index (Only )?Scan using change_commit_feeds_pk/);
      expect(plan).not.toMatch(/Seq Scan/);
      expect(plan, 'the busy feed commits are never read').not.toMatch(/change_commits_commit_seq_key/);
      // the per-row SECURITY DEFINER check is gone from the query
      expect(plan).not.toMatch(/_feed_visible/);
    });
  },
);

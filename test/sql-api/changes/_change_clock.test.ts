import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { waitFor } from '../../support/wait-for.js';

// _change_clock (and _feed_lock, the same loop) under a crowd: a waiter takes the row in a
// subtransaction, lets it go and takes it again at the top level, and another waiter may take it in
// between, so a commit can lose several turns in a row. The bound is lock_timeout's time, never a
// count of turns: four turns failed a loaded CI run's 10,000-change test ("the change clock of feed
// default could not be taken"). Here a crowd is released at once and every commit must get through;
// on a quiet machine the old four turns passed this too (losing a turn needs the scheduler's help).

const reachable = await postgresReachable();
const WRITERS = 16;

describe.skipIf(!reachable)(`the change clock under a crowd of commits of one feed (${NEEDS_POSTGRES})`, () => {
  let tdb: TestDatabase;
  let sessions: postgres.Sql[] = [];
  beforeAll(async () => {
    tdb = await createTestDatabase('change_clock_crowd');
    const owner = postgres(tdb.url!, { max: 1, onnotice: () => {} });
    sessions.push(owner);
    await owner.unsafe(`insert into intake_sync.prescriptions (external_id, patient_first_name, patient_last_name, patient_state,
        patient_dob, prescriber_npi, written_date, drug_ndc, identity_key)
      select 'rx-' || g, 'First', 'Last', 'NY', '1990-01-01', '1234567893', '2024-12-01', '00002015204', 'key-' || g
      from generate_series(0, ${WRITERS}) g`);
  });
  afterAll(async () => {
    await Promise.all(sessions.map((s) => s.end({ timeout: 5 })));
    sessions = [];
    await tdb?.drop();
  });

  test(`${WRITERS} commits released at once by the clock's holder all commit, in one order`, async () => {
    const connect = () => {
      const session = postgres(tdb.url!, { max: 1, onnotice: () => {}, connection: { application_name: 'clock-crowd' } });
      sessions.push(session);
      return session;
    };
    const holder = connect();
    const observer = sessions[0]!;
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // the feed's first commit makes its clock row: the crowd below queues on the row's lock
    await observer.unsafe(`update intake_sync.prescriptions set status = 'accepted' where external_id = 'rx-0'`);
    // the holder stamps its commit early (SET CONSTRAINTS ALL IMMEDIATE) and keeps the feed's clock
    const holding = holder.begin(async (tx) => {
      await tx.unsafe(`update intake_sync.prescriptions set status = 'ordered' where external_id = 'rx-0'`);
      await tx.unsafe('set constraints all immediate');
      await released;
    });
    await waitFor(
      async () =>
        (await observer.unsafe(`select 1 from intake_sync.change_clocks where feed = 'default' for update skip locked`)).length === 0,
      {
        timeoutMs: 20_000,
        what: 'the holder to take the clock',
      },
    );
    // every writer commits a status change of the same feed, and waits on the clock at COMMIT
    let settled = 0;
    const writers = Array.from({ length: WRITERS }, (_, i) =>
      connect()
        .begin(async (tx) => {
          await tx.unsafe(`set local lock_timeout = '60s'`);
          await tx.unsafe(`update intake_sync.prescriptions set status = 'accepted' where external_id = 'rx-${i + 1}'`);
        })
        .then(
          () => 'committed',
          (error: { message?: string }) => error.message ?? 'failed',
        )
        .finally(() => {
          settled += 1;
        }),
    );
    await waitFor(
      async () => {
        const [row] = await observer.unsafe<{ n: number }[]>(
          `select count(*)::int as n from pg_stat_activity where application_name = 'clock-crowd' and wait_event_type = 'Lock'`,
        );
        // a writer that did not wait (it failed at once) is caught by the assertion below
        return (row?.n ?? 0) + settled === WRITERS;
      },
      { timeoutMs: 30_000, what: `all ${WRITERS} writers to wait on the clock` },
    );
    release();
    await holding;
    expect(await Promise.all(writers)).toEqual(Array.from({ length: WRITERS }, () => 'committed'));
    // each commit has its own place on the feed's clock
    const [clock] = await observer.unsafe<{ commits: number; distinct: number }[]>(
      `select count(*)::int as commits, count(distinct commit_seq)::int as distinct from intake_sync.change_commit_feeds where feed = 'default'`,
    );
    expect(clock).toEqual({ commits: WRITERS + 2, distinct: WRITERS + 2 });
  }, 120_000);
});

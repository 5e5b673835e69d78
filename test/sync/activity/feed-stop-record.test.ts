import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantsScript } from '../../../src/db/grants-script.js';
import { registerFeeds } from '../../../src/db/feed-registry.js';
import { storeNames } from '../../../src/db/store-names.js';
import { createLogger } from '../../../src/log/log.js';
import { attachFeedStopRecord, FEED_STOP_REASON_MAX } from '../../../src/sync/activity/feed-stop-record.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase, urlAs } from '../../support/db.js';
import { useLoginRoles } from '../../support/login-roles.js';

// feed_stops (0026): the leading worker records why it stopped a feed, in /readyz's words with the
// fixing command, and removes it at its next success; written with the runtime role's grants only.

const reachable = await postgresReachable();
const FEED = 'clinic-a';
const RUNTIME = `feedstop_runtime_${process.pid}`;

describe.skipIf(!reachable)(`feed stop record (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  useLoginRoles([RUNTIME]);
  let tdb: TestDatabase;
  let owner: postgres.Sql;
  let runtime: postgres.Sql;
  beforeAll(async () => {
    tdb = await createTestDatabase('feed_stop_record');
    await registerFeeds(tdb.database.db, [FEED, 'clinic-b'], null);
    owner = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
    await owner.unsafe(grantsScript('runtime', 'intake_sync', RUNTIME, { kind: 'all' }).join('\n'));
    runtime = postgres(urlAs(tdb.url ?? '', RUNTIME), { max: 1, onnotice: () => {} });
  }, 120_000);
  afterAll(async () => {
    await runtime?.end();
    await owner?.unsafe(`drop owned by "${RUNTIME}"`).catch(() => {});
    await owner?.end();
    await tdb?.drop();
  });

  const rows = () =>
    owner<{ feed: string; reason: string; command: string | null; stopped_at: Date }[]>`
      select feed, reason, command, stopped_at from intake_sync.feed_stops order by feed`;
  const quarantined = { malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 0 };
  const page = { received: 1, inserted: 1, duplicates: 0, matched: 1, statusChanges: 1, quarantined, done: true, durationMs: 1 };
  const record = (state: WorkerState) =>
    attachFeedStopRecord({
      state,
      db: drizzle(runtime),
      names: storeNames('intake_sync'),
      feed: FEED,
      log: createLogger({ level: 'silent' }),
    });

  it('a cursor stop is recorded with its command, kept across a retelling, and removed when the feed consumes again', async () => {
    const state = new WorkerState({ now: () => 0 });
    let detach = record(state);
    state.cursorStopped(FEED, 'expired', { at: 'it-9' });
    await detach();
    const [first] = await rows();
    expect(first).toMatchObject({ feed: FEED, command: 'intake-sync resync --feed clinic-a' });
    expect(first?.reason).toMatch(/^feed clinic-a stopped consuming: the operator says the stored iterator expired/);

    // a restarted worker finding the same stop keeps when it began
    const again = new WorkerState({ now: () => 0 });
    detach = record(again);
    again.cursorStopped(FEED, 'expired', { at: 'it-9' });
    await detach();
    expect((await rows())[0]?.stopped_at).toEqual(first?.stopped_at);

    // the checkpoint moved (a resync): consuming again, the record goes
    detach = record(again);
    again.cursorCleared();
    await detach();
    expect(await rows()).toEqual([]);
  });

  it('a 401 stop has no command; a stop recorded before this process is cleared by its first success; a long line is cut', async () => {
    const state = new WorkerState({ now: () => 0 });
    const detach = record(state);
    state.fatal(`401 Unauthorized ${'x'.repeat(2_000)}`);
    await detach();
    const [stop] = await rows();
    expect(stop?.command).toBeNull();
    expect(stop?.reason.length).toBe(FEED_STOP_REASON_MAX);
    expect(stop?.reason).toMatch(/^stopped consuming: 401 Unauthorized x+$/);

    const next = new WorkerState({ now: () => 0 });
    const detachNext = record(next);
    next.pageApplied(page, { iterator: 'it-10', version: 2 }, false);
    await detachNext();
    expect(await rows()).toEqual([]);
  });

  it('the first stop of a restarted feed keeps its start; the other feed is untouched', async () => {
    await owner`insert into intake_sync.feed_stops (feed, stopped_at, reason) values ('clinic-b', now() - interval '1 hour', 'stopped consuming: 401')`;
    const state = new WorkerState({ now: () => 0 });
    const detach = record(state);
    state.pollSucceeded({ done: true, noProgress: false });
    await detach();
    expect((await rows()).map((r) => r.feed)).toEqual(['clinic-b']);
    // the table refuses what its bounds refuse, whoever writes
    await expect(owner`insert into intake_sync.feed_stops (feed, reason) values ('clinic-a', '')`).rejects.toThrow(
      /feed_stops_reason_length/,
    );
  });
});

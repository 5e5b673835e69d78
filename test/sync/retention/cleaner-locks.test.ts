import { sql } from 'drizzle-orm';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Db } from '../../../src/db/connection.js';
import { namesOf } from '../../../src/db/store-names.js';
import { sleepUnlessAborted } from '../../../src/lib/loop-sleep.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import type { BatchOutcome } from '../../../src/sync/retention/decisions.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { purgePass } from '../../../src/sync/retention/purge-pass.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { event } from '../../support/sync/fixtures.js';
import { DAY, policy } from '../../support/sync/retention.js';

// The cleaner's batches never hold a lock a page waits on longer than their timeout, measured with
// real concurrent page applies on the real server: each page replays the oldest events, exactly the
// rows the cleaner's batches lock first (an insert ON CONFLICT waits for a row being updated).

const onPostgres = await postgresReachable();
const FEED = 'default';
const ROWS = 60_000;
const TIMEOUT_MS = 200;
let tdb: TestDatabase;
let db: Db;

beforeAll(async () => {
  if (!onPostgres) return;
  tdb = await createTestDatabase('retention_locks');
  db = tdb.database.db;
  // old events with a body worth stripping, written directly (the cleaner does not care how they came)
  await db.execute(sql`insert into intake_sync.events (id, feed, name, occurred_at, subscription_id, api_version, payload, raw, identity_key, received_at)
    select 'e' || g, 'default', 'accepted', '2024-12-10T10:00:00Z', 'sub-1', '2024-12-10', '{}'::jsonb,
      json_build_object('id', 'e' || g, 'pad', repeat('x', 400)), 'key-' || g, now() - interval '40 days'
    from generate_series(1, ${ROWS}) g`);
});
afterAll(async () => {
  await tdb?.drop();
});

/** Replays the 100 oldest events as one page; returns how long the apply took. */
async function replayPage(): Promise<number> {
  const { version } = await loadCheckpoint(db, FEED);
  const events = Array.from({ length: 100 }, (_, i) => event(`e${i + 1}`, 'accepted', '2024-12-10T10:00:00Z'));
  const started = performance.now();
  await applyPage(db, { feed: FEED, expectedVersion: version, nextIterator: `it-${version + 1}`, events });
  return performance.now() - started;
}

test.skipIf(!onPostgres)(
  `a page waits on the cleaner at most its ${TIMEOUT_MS} ms batch timeout (${NEEDS_POSTGRES})`,
  async () => {
    const baseline: number[] = [];
    for (let i = 0; i < 10; i++) baseline.push(await replayPage());

    const outcomes: { outcome: BatchOutcome; rows: number; ms: number }[] = [];
    const stop = new AbortController();
    const cleaning = purgePass(
      { feed: FEED, policy: policy({ event_bodies: 30 * DAY }) },
      {
        db,
        names: namesOf(db),
        now: Date.now(),
        // a first batch far too big for its timeout: it is cancelled, rolled back, and halved
        batch: {
          initialRows: ROWS,
          timeoutMs: TIMEOUT_MS,
          detectWaiters: true,
          limits: { minRows: 100, maxRows: ROWS, pauseMs: 5, backoffMs: 20, maxBackoffMs: 200 },
        },
        sleep: sleepUnlessAborted,
        signal: stop.signal,
        onBatch: (_cls, outcome, rows, ms) => outcomes.push({ outcome, rows, ms }),
      },
    );
    let finished = false;
    const result = cleaning.finally(() => {
      finished = true;
    });
    const during: number[] = [];
    while (!finished) during.push(await replayPage());
    const { counts, complete } = await result;

    expect(counts.event_bodies).toBe(ROWS);
    expect(complete).toBe(true);
    expect(outcomes.some((o) => o.outcome.kind === 'timed_out')).toBe(true);
    // no batch ran past its timeout (plus the commit and the waiters check)
    const slowest = Math.max(...outcomes.map((o) => o.ms));
    const worstPage = Math.max(...during);
    const worstBaseline = Math.max(...baseline);
    console.log(
      `cleaner locks: ${outcomes.length} batches (${outcomes.filter((o) => o.outcome.kind === 'timed_out').length} timed out, ` +
        `${outcomes.filter((o) => o.outcome.kind === 'contended').length} contended), slowest batch ${slowest.toFixed(0)} ms; ` +
        `${during.length} pages during the pass, slowest ${worstPage.toFixed(0)} ms (baseline slowest ${worstBaseline.toFixed(0)} ms)`,
    );
    // a page's wait on the cleaner is bounded by the batch timeout: its slowest apply is at most its own slowest
    // time plus the timeout (and scheduling slack on a shared machine)
    expect(worstPage).toBeLessThan(worstBaseline + TIMEOUT_MS + 300);
    expect(during.length).toBeGreaterThan(0);
  },
  120_000,
);

import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../../src/db/connection.js';
import { evaluateReadiness } from '../../../src/ops/readiness.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';
import { event } from '../../support/sync/fixtures.js';
import { sampleIdentity } from '../../../src/sandbox/fixtures.js';

/**
 * A page behind an application transaction that holds the match lock (issue 17 §3): /readyz says
 * the page waits for it, and lock_timeout ends the wait with an error naming the lock, not the
 * client's 120 s deadline. Directly connected and behind a pooler (SET LOCAL) alike.
 */
const real = await postgresReachable();

describe.skipIf(!real)(`a page waiting for the match lock${real ? '' : ` (${NEEDS_POSTGRES})`}`, () => {
  let tdb: TestDatabase;
  let app: postgres.Sql;
  beforeAll(async () => {
    tdb = await createTestDatabase('match_lock_wait');
    app = postgres(tdb.url as string, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await app?.end();
    await tdb?.drop();
  });

  for (const pooled of [false, true]) {
    it(`${pooled ? 'behind a pooler (SET LOCAL)' : 'directly connected (startup parameters)'}: reported while waiting, ended by lock_timeout`, async () => {
      const database: Database = await openDatabase({
        url: tdb.url as string,
        pooled,
        timeouts: { lockTimeoutMs: 1_500, statementTimeoutMs: 20_000 },
      });
      let now = 0;
      const state = new WorkerState({ now: () => now });
      const waits: string[] = [];
      const matchLockWait = {
        started: () => {
          waits.push('started');
          state.matchLockWaitStarted();
        },
        ended: () => {
          waits.push('ended');
          state.matchLockWaitEnded();
        },
      };
      try {
        const { version } = await loadCheckpoint(database.db, 'default');
        // the feed's lock row exists (a first use would make the page wait on its creation instead)
        await database.db.execute(sql`select intake_sync._feed_lock('default', 'match', false)`);
        // an application's transaction left open after register_prescription: it holds the lock exclusively
        const held = app.reserve();
        const conn = await held;
        await conn.unsafe('begin');
        await conn`select intake_sync.register_prescription(${`rx-hold-${pooled}`}, ${JSON.stringify(sampleIdentity(1))}::text::jsonb, 'default')`;
        try {
          const page = applyPage(database.db, {
            feed: 'default',
            expectedVersion: version,
            nextIterator: `it-${version + 1}`,
            events: [event('lock-e1', 'accepted', '2024-12-10T10:00:00Z')],
            matchLockWait,
          });
          const outcome = page.then(
            () => 'applied',
            (error: Error) => error,
          );
          expect(waits).toEqual(['started']);
          now = 6_000;
          const readiness = evaluateReadiness(state.snapshot(), true, { maxPollAgeMs: 600_000, maxFailures: 5 }, now);
          expect(readiness.reasons).toContain('page waiting 6s for the match lock of its feed (the holder is named if the wait times out)');
          const error = await outcome;
          expect(error).toBeInstanceOf(Error);
          expect((error as Error).name).toBe('LockWaitTimeoutError');
          expect((error as Error).message).toContain('lock_timeout (DB_LOCK_TIMEOUT_MS)');
          // the lock really waited on and its holder, read by the server from pg_locks (issue 33)
          const [holder] = await conn<{ pid: number; role: string }[]>`select pg_backend_pid() as pid, current_user as role`;
          expect((error as Error).message, (error as Error).message).toContain(
            `for the match lock of feed default (feed_locks), held by backend pid ${holder?.pid} (role ${holder?.role}, application_name`,
          );
          expect(waits).toEqual(['started', 'ended']);
          expect(state.snapshot().matchLockWaitSince).toBeNull();
        } finally {
          await conn.unsafe('rollback');
          conn.release();
        }
        // the lock released, the same page applies
        const { version: after } = await loadCheckpoint(database.db, 'default');
        const applied = await applyPage(database.db, {
          feed: 'default',
          expectedVersion: after,
          nextIterator: `it-${after + 1}-${pooled}`,
          events: [event(`lock-e2-${pooled}`, 'accepted', '2024-12-10T10:00:00Z')],
          matchLockWait,
        });
        expect(applied.inserted).toBe(1);
        expect(waits.slice(-2)).toEqual(['started', 'ended']);
      } finally {
        await database.close();
      }
    });
  }

  it('every daemon session carries the timeouts', async () => {
    const database = await openDatabase({ url: tdb.url as string, timeouts: { lockTimeoutMs: 2_500, statementTimeoutMs: 45_000 } });
    try {
      const [row] = await (database.sql as postgres.Sql)<{ lock: string; statement: string }[]>`
        select current_setting('lock_timeout') as lock, current_setting('statement_timeout') as statement`;
      expect(row).toEqual({ lock: '2500ms', statement: '45s' });
    } finally {
      await database.close();
    }
  });
});

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { queryRows } from '../../../src/db/connection.js';
import { createLogger } from '../../../src/log/log.js';
import { RetentionCleaner } from '../../../src/sync/retention/cleaner.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { DAY, policy } from '../../support/sync/retention.js';

// The cleaner as a leader task: its waits and clock are injected; each pass is recorded (retention_runs)
// and audited when it removed anything; stop() ends it during its wait.

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase('retention_cleaner');
});
afterAll(async () => {
  await tdb.drop();
});

test('waits the start delay, runs a pass at the injected now, records it, waits the interval; stop() ends the wait', async () => {
  const { db } = tdb.database;
  await db.execute(sql`insert into intake_sync.quarantine (quarantine_key, event_id, feed, reason, detail, raw, resolved_at)
    values ('q1', 'q1', 'default', 'unmatched', 'no match', '{}'::jsonb, '2025-01-01T00:00:00Z')`);
  const waits: number[] = [];
  const purged: [string, number][] = [];
  let passDone: () => void = () => {};
  const secondWait = new Promise<void>((resolve) => {
    passDone = resolve;
  });
  const cleaner = new RetentionCleaner({
    db,
    feed: 'default',
    settings: {
      policy: policy({ quarantine: 30 * DAY }),
      intervalMs: 3_600_000,
      startDelayMs: 10_000,
      batch: {
        initialRows: 10,
        timeoutMs: 5_000,
        detectWaiters: false,
        limits: { minRows: 1, maxRows: 10, pauseMs: 0, backoffMs: 1, maxBackoffMs: 1 },
      },
    },
    clock: { now: () => Date.parse('2025-03-01T00:00:00Z') },
    sleep: async (ms, signal) => {
      waits.push(ms);
      if (waits.length === 1) return;
      passDone();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
    log: createLogger({ level: 'silent' }),
    onPurged: (cls, rows) => purged.push([cls, rows]),
  });
  const running = cleaner.run();
  await secondWait;
  expect(waits).toEqual([10_000, 3_600_000]);
  expect(purged).toEqual([['quarantine', 1]]);
  const [run] = await queryRows<{ feed: string; last_counts: Record<string, number> }>(
    db,
    sql`select feed, last_counts from intake_sync.retention_runs`,
  );
  expect(run).toMatchObject({ feed: 'default', last_counts: { quarantine: 1, events: 0 } });
  const audit = await queryRows(db, sql`select action, feed, actor, detail from intake_sync.audit_log where action = 'purge.run'`);
  expect(audit).toEqual([
    {
      action: 'purge.run',
      feed: 'default',
      actor: expect.stringMatching(/\(intake-sync\.retention-cleaner\)$/),
      detail: expect.objectContaining({ quarantine: 1 }),
    },
  ]);
  await cleaner.stop();
  await running;
});

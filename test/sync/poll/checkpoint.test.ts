import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { loadCheckpoint, resetCheckpoint, touchCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { listCheckpointResets } from '../../../src/operations/checkpoint/checkpoint-reads.js';
import { CheckpointConflictError } from '../../../src/sync/apply/errors/checkpoint-conflict-error.js';
import { registerLocalPrescriptions } from '../../../src/sync/matching/local-prescriptions.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { event, identity, snapshotStore, truncateStore } from '../../support/sync/fixtures.js';

const FEED = 'default';
let tdb: TestDatabase;
let db: Db;

beforeAll(async () => {
  tdb = await createTestDatabase('sync_checkpoint');
  db = tdb.database.db;
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await truncateStore(db);
  await registerLocalPrescriptions(db, [
    { external_id: 'rx-ada', prescription_identity: identity() },
    { external_id: 'rx-bob', prescription_identity: identity({ patient_first_name: 'Bob' }) },
  ]);
});

/** A feed of pages as the operator would serve them, with a malformed and an unmatched event. */
const FEED_PAGES: Array<{ iterator: string; events: unknown[] }> = [
  {
    iterator: 'p1',
    events: [
      event('e1', 'accepted', '2024-12-10T10:00:00Z'),
      event('b1', 'accepted', '2024-12-10T10:00:00Z', { patient_first_name: 'Bob' }),
    ],
  },
  {
    iterator: 'p2',
    events: [
      event('e2', 'ordered', '2024-12-10T10:05:00Z'),
      { id: 'broken' },
      event('u1', 'accepted', '2024-12-10T10:00:00Z', { patient_first_name: 'Zed' }),
    ],
  },
  {
    iterator: 'p3',
    events: [
      event('e3', 'dispensed', '2024-12-10T10:10:00Z'),
      event('b2', 'rejected', '2024-12-10T10:05:00Z', { patient_first_name: 'Bob' }),
    ],
  },
];

async function drain(pages = FEED_PAGES): Promise<void> {
  for (const page of pages) {
    const { version } = await loadCheckpoint(db, FEED);
    await applyPage(db, { feed: FEED, expectedVersion: version, nextIterator: page.iterator, events: page.events });
  }
}

/** What replay must leave unchanged: history, statuses and findings (not counters or times). */
async function outcome() {
  return {
    events: await queryRows(db, sql`select id, name, prescription_id, status_rank from intake_sync.events order by id`),
    prescriptions: await queryRows(
      db,
      sql`select external_id, status, status_rank, status_occurred_at, status_event_id from intake_sync.prescriptions order by external_id`,
    ),
    quarantine: await queryRows(
      db,
      sql`select quarantine_key, reason, detail, resolved_at is null as open from intake_sync.quarantine order by quarantine_key`,
    ),
  };
}

describe('checkpoint', () => {
  test('loadCheckpoint creates version 0 at the beginning, and concurrent first loads agree', async () => {
    const loads = await Promise.all([loadCheckpoint(db, 'other'), loadCheckpoint(db, 'other'), loadCheckpoint(db, 'other')]);
    for (const c of loads) expect(c).toMatchObject({ feed: 'other', iterator: null, version: 0, pagesApplied: 0 });
  });

  test('touchCheckpoint stamps updated_at at the expected version only, moving nothing else', async () => {
    await loadCheckpoint(db, FEED);
    await db.execute(sql`update intake_sync.feed_checkpoints set updated_at = now() - interval '1 hour', iterator = 'it-3', version = 3`);
    await touchCheckpoint(db, FEED, 2); // stale: a reset moved it
    const untouched = await loadCheckpoint(db, FEED);
    expect(Date.now() - untouched.updatedAt.getTime()).toBeGreaterThan(3_000_000);
    await touchCheckpoint(db, FEED, 3);
    const touched = await loadCheckpoint(db, FEED);
    expect(touched).toMatchObject({ iterator: 'it-3', version: 3, pagesApplied: 0 });
    expect(Date.now() - touched.updatedAt.getTime()).toBeLessThan(60_000);
  });

  test('a stale version throws CheckpointConflictError and applies nothing', async () => {
    await drain(FEED_PAGES.slice(0, 1));
    const before = await snapshotStore(db);
    const stale = applyPage(db, { feed: FEED, expectedVersion: 0, nextIterator: 'p2', events: FEED_PAGES[1]?.events ?? [] });
    await expect(stale).rejects.toBeInstanceOf(CheckpointConflictError);
    await expect(stale).rejects.toMatchObject({ name: 'CheckpointConflictError', feed: FEED, expectedVersion: 0 });
    expect(await snapshotStore(db)).toEqual(before);
  });

  test('two workers applying on the same version: exactly one page applies, the other conflicts', async () => {
    const { version } = await loadCheckpoint(db, FEED);
    const page = FEED_PAGES[0]?.events ?? [];
    const results = await Promise.allSettled([
      applyPage(db, { feed: FEED, expectedVersion: version, nextIterator: 'worker-a', events: page }),
      applyPage(db, { feed: FEED, expectedVersion: version, nextIterator: 'worker-b', events: page }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(rejected).toHaveLength(1);
    expect(rejected[0]?.reason).toBeInstanceOf(CheckpointConflictError);
    expect(await loadCheckpoint(db, FEED)).toMatchObject({ version: version + 1, pagesApplied: 1, eventsApplied: 2 });
  });

  test('a reset bumps the version, so the worker holding the old one cannot overwrite it', async () => {
    await drain(FEED_PAGES.slice(0, 2));
    const held = await loadCheckpoint(db, FEED);
    const reset = await resetCheckpoint(db, FEED, { to: 'p1', by: 'ops@host' });
    expect(reset).toEqual({ from: 'p2', to: 'p1', version: held.version + 1 });
    await expect(
      applyPage(db, { feed: FEED, expectedVersion: held.version, nextIterator: 'p3', events: FEED_PAGES[2]?.events ?? [] }),
    ).rejects.toBeInstanceOf(CheckpointConflictError);
    expect(await loadCheckpoint(db, FEED)).toMatchObject({ iterator: 'p1', version: held.version + 1 });
    const audit = await listCheckpointResets(db, FEED);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ feed: FEED, from: 'p2', to: 'p1', by: 'ops@host' });
    expect(audit[0]?.at).toBeInstanceOf(Date);
  });

  test('reset to the beginning and replay gives the identical final state', async () => {
    await drain();
    const first = await outcome();
    expect(first.prescriptions).toMatchObject([
      { external_id: 'rx-ada', status: 'dispensed' },
      { external_id: 'rx-bob', status: 'rejected' },
    ]);
    await resetCheckpoint(db, FEED, { to: null, by: 'ops@host' });
    expect(await loadCheckpoint(db, FEED)).toMatchObject({ iterator: null });
    await drain();
    expect(await outcome()).toEqual(first);
    const checkpoint = await loadCheckpoint(db, FEED);
    // replayed events are duplicates: history counts each event once
    expect(checkpoint).toMatchObject({ iterator: 'p3', pagesApplied: 6, eventsApplied: 6 });
  });
});

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { applyPage } from '../../../src/sync/apply/apply-page.js';
import { loadCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { listLocalPrescriptions, registerLocalPrescriptions } from '../../../src/sync/matching/local-prescriptions.js';
import { listQuarantine } from '../../../src/store-api/triage/quarantine-list.js';
import { createTestDatabase, type TestDatabase } from '../../support/db.js';
import { event, identity, truncateStore } from '../../support/sync/fixtures.js';

// Two operator accounts (feeds) may hand out the same event id: each keeps its own event and
// its own quarantine finding (migration 0007). Keyed by id alone, the second feed's copy was
// skipped as a duplicate of the first's.

let tdb: TestDatabase;
let db: Db;

beforeAll(async () => {
  tdb = await createTestDatabase('sync_event_ids_per_feed');
  db = tdb.database.db;
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await truncateStore(db);
});

async function applyOnFeed(feed: string, events: unknown[]) {
  const { version } = await loadCheckpoint(db, feed);
  return applyPage(db, { feed, expectedVersion: version, nextIterator: `${feed}-${version + 1}`, events });
}

async function statusOf(feed: string, externalId: string) {
  return (await listLocalPrescriptions(db, { feed })).find((p) => p.external_id === externalId);
}

describe('event ids are per feed', () => {
  test('the same id on two feeds is two events, each applied to its own feed', async () => {
    await registerLocalPrescriptions(db, [{ external_id: 'rx-1', prescription_identity: identity() }], { feed: 'north' });
    await registerLocalPrescriptions(db, [{ external_id: 'rx-1', prescription_identity: identity() }], { feed: 'south' });

    const north = await applyOnFeed('north', [event('evt-7', 'accepted', '2024-12-10T10:00:00Z')]);
    const south = await applyOnFeed('south', [event('evt-7', 'ordered', '2024-12-10T10:05:00Z')]);

    expect(north).toMatchObject({ inserted: 1, duplicates: 0, matched: 1, statusChanges: 1 });
    expect(south).toMatchObject({ inserted: 1, duplicates: 0, matched: 1, statusChanges: 1 });
    expect(await statusOf('north', 'rx-1')).toMatchObject({ status: 'accepted', events: 1 });
    expect(await statusOf('south', 'rx-1')).toMatchObject({ status: 'ordered', events: 1 });
    const rows = await queryRows<{ feed: string; name: string }>(
      db,
      sql`select feed, name from intake_sync.events where id = 'evt-7' order by feed`,
    );
    expect(rows).toEqual([
      { feed: 'north', name: 'accepted' },
      { feed: 'south', name: 'ordered' },
    ]);
  });

  test('within one feed the id is still the dedupe', async () => {
    await registerLocalPrescriptions(db, [{ external_id: 'rx-1', prescription_identity: identity() }], { feed: 'north' });
    await applyOnFeed('north', [event('evt-7', 'accepted', '2024-12-10T10:00:00Z')]);
    const again = await applyOnFeed('north', [event('evt-7', 'accepted', '2024-12-10T10:00:00Z')]);
    expect(again).toMatchObject({ inserted: 0, duplicates: 1 });
  });

  test('held events with the same id keep one finding per feed, and a registration resolves only its own feed', async () => {
    const held = event('evt-9', 'accepted', '2024-12-10T10:00:00Z', { patient_first_name: 'Grace' });
    await applyOnFeed('north', [held]);
    await applyOnFeed('south', [held]);
    const open = await listQuarantine(db);
    expect(open.map((q) => [q.feed, q.event_id, q.reason])).toEqual([
      ['north', 'evt-9', 'unmatched'],
      ['south', 'evt-9', 'unmatched'],
    ]);

    await registerLocalPrescriptions(db, [{ external_id: 'rx-grace', prescription_identity: identity({ patient_first_name: 'Grace' }) }], {
      feed: 'south',
    });

    expect((await listQuarantine(db)).map((q) => [q.feed, q.event_id])).toEqual([['north', 'evt-9']]);
    expect(await statusOf('south', 'rx-grace')).toMatchObject({ status: 'accepted', events: 1 });
    const linked = await queryRows<{ feed: string; linked: boolean }>(
      db,
      sql`select feed, prescription_id is not null as linked from intake_sync.events where id = 'evt-9' order by feed`,
    );
    expect(linked).toEqual([
      { feed: 'north', linked: false },
      { feed: 'south', linked: true },
    ]);
  });
});

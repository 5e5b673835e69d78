import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { feedOriginConflict, listFeedOrigins, registerFeeds } from '../../src/db/feed-registry.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { truncateStore } from '../support/sync/fixtures.js';

describe('feedOriginConflict', () => {
  it.each<[string, Array<{ feed: string; origin: 'operator' | 'simulator' | null }>, 'operator' | 'simulator', string | null]>([
    ['an empty database takes either', [], 'simulator', null],
    ['registered, unclaimed feeds take either', [{ feed: 'default', origin: null }], 'operator', null],
    ['the demo never joins an operator feed', [{ feed: 'clinic-a', origin: 'operator' }], 'simulator', 'clinic-a'],
    ['a real run never joins the demo', [{ feed: 'default', origin: 'simulator' }], 'operator', 'default'],
    ['same kind: fine', [{ feed: 'default', origin: 'operator' }], 'operator', null],
  ])('%s', (_label, existing, origin, conflict) => {
    expect(feedOriginConflict(existing, origin)?.feed ?? null).toBe(conflict);
  });
});

describe('registerFeeds', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase('feed_registry');
  });
  afterAll(() => tdb?.drop());
  beforeEach(() => truncateStore(tdb.database.db));

  it('registers, claims an unclaimed feed, and refuses the other kind writing nothing', async () => {
    const { db } = tdb.database;
    expect(await listFeedOrigins(db)).toEqual([{ feed: 'default', origin: null }]);
    expect(await registerFeeds(db, ['default', 'clinic-a'], 'operator')).toBeNull();
    expect(await registerFeeds(db, ['default'], 'simulator')).toEqual({ feed: 'clinic-a', origin: 'operator' });
    // migrate re-registering never changes a claim
    expect(await registerFeeds(db, ['default', 'clinic-b'], null)).toBeNull();
    expect(await listFeedOrigins(db)).toEqual([
      { feed: 'clinic-a', origin: 'operator' },
      { feed: 'clinic-b', origin: null },
      { feed: 'default', origin: 'operator' },
    ]);
  });
});

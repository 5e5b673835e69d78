import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { queryRows, type Db } from '../../../src/db/connection.js';
import { listCheckpointResets, peekCheckpoint } from '../../../src/operations/checkpoint/checkpoint-reads.js';
import { loadCheckpoint, resetCheckpoint } from '../../../src/sync/poll/checkpoint.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../support/db.js';

const real = await postgresReachable();
let tdb: TestDatabase;
let db: Db;

beforeAll(async () => {
  tdb = await createTestDatabase('operations_checkpoint_reads');
  db = tdb.database.db;
});
afterAll(async () => {
  await tdb?.drop();
});

const checkpointRows = async (feed: string) =>
  (
    await queryRows<{ n: number }>(db, sql`select count(*)::int as n from ${tdb.database.names.feedCheckpoints} where feed = ${feed}::text`)
  )[0]?.n;

describe.skipIf(!real)(`what checkpoint show, history and reset --dry-run read (${NEEDS_POSTGRES})`, () => {
  test('a feed with no checkpoint row peeks as the beginning, and the peek writes none', async () => {
    expect(await peekCheckpoint(db, 'never-polled')).toEqual({ iterator: null, version: 0 });
    expect(await checkpointRows('never-polled')).toBe(0);
    expect(await listCheckpointResets(db, 'never-polled')).toEqual([]);
  });

  test("the position and version as the worker would read them, and the feed's moves oldest first, its own only", async () => {
    await loadCheckpoint(db, 'clinic_a');
    await resetCheckpoint(db, 'clinic_a', { to: 'it-1', by: 'ana@ops' });
    await resetCheckpoint(db, 'clinic_a', { to: null, by: 'bo@ops' });
    await resetCheckpoint(db, 'clinic_b', { to: 'it-9', by: 'cy@ops' });
    const loaded = await loadCheckpoint(db, 'clinic_a');
    expect(await peekCheckpoint(db, 'clinic_a')).toEqual({ iterator: loaded.iterator, version: loaded.version });
    expect(loaded).toMatchObject({ iterator: null, version: 2 });
    const resets = await listCheckpointResets(db, 'clinic_a');
    expect(resets.map(({ feed, from, to, by }) => ({ feed, from, to, by }))).toEqual([
      { feed: 'clinic_a', from: null, to: 'it-1', by: 'ana@ops' },
      { feed: 'clinic_a', from: 'it-1', to: null, by: 'bo@ops' },
    ]);
    expect(resets.every((reset) => reset.at instanceof Date && !Number.isNaN(reset.at.getTime()))).toBe(true);
  });
});

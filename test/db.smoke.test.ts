import { afterAll, beforeAll, expect, test } from 'vitest';
import { queryRows } from '../src/db/connection.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { sql } from 'drizzle-orm';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase('smoke');
});
afterAll(async () => {
  await tdb.drop();
});

test('migrations create the store tables', async () => {
  const rows = await queryRows<{ table_name: string }>(
    tdb.database.db,
    sql`select table_name from information_schema.tables where table_schema = 'public' order by 1`,
  );
  expect(rows.map((r) => r.table_name)).toEqual([
    'checkpoint_resets',
    'events',
    'feed_checkpoints',
    'prescriptions',
    'quarantine',
  ]);
});

import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { queryRows, type Db } from '../../src/db/connection.js';
import { inTransaction } from '../../src/sync/page-transaction.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { truncateStore } from './fixtures.js';

let tdb: TestDatabase;
let db: Db;

beforeAll(async () => {
  tdb = await createTestDatabase('sync_page_transaction');
  db = tdb.database.db;
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await truncateStore(db);
});

const insertFeed = (feed: string) => sql`insert into feed_checkpoints (feed) values (${feed}::text) returning feed`;
const feeds = async () => (await queryRows<{ feed: string }>(db, sql`select feed from feed_checkpoints order by feed`)).map((r) => r.feed);

describe('inTransaction', () => {
  test('commits every statement, the last one included', async () => {
    const rows = await inTransaction(db, async (run) => {
      await run(insertFeed('a'));
      return run<{ feed: string }>(insertFeed('b'), { last: true });
    });
    expect(rows).toEqual([{ feed: 'b' }]);
    expect(await feeds()).toEqual(['a', 'b']);
  });

  test('a failing last statement rolls back the earlier ones', async () => {
    const failing = inTransaction(db, async (run) => {
      await run(insertFeed('a'));
      return run(sql`select 1 / 0`, { last: true });
    });
    // drizzle (PGlite) wraps the driver error; the original is its cause
    await expect(failing).rejects.toSatisfy((e: Error) => /division by zero/.test(`${e.message} ${String(e.cause)}`));
    expect(await feeds()).toEqual([]);
  });

  test('a body that throws rolls back, and the connection is usable afterwards', async () => {
    const failing = inTransaction(db, async (run) => {
      await run(insertFeed('a'));
      throw new Error('conflict');
    });
    await expect(failing).rejects.toThrow('conflict');
    expect(await feeds()).toEqual([]);
    for (let i = 0; i < 6; i++) await inTransaction(db, (run) => run(insertFeed(`x${i}`), { last: true }));
    expect(await feeds()).toHaveLength(6);
  });

  test('statements queued together run in order within the transaction', async () => {
    const [first, second] = await inTransaction(db, (run) =>
      Promise.all([run<{ feed: string }>(insertFeed('a')), run<{ n: number }>(sql`select count(*)::int as n from feed_checkpoints`)]),
    );
    expect(first).toEqual([{ feed: 'a' }]);
    expect(second).toEqual([{ n: 1 }]);
  });
});

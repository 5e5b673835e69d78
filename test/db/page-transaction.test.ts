import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { queryRows, type Db } from '../../src/db/connection.js';
import { openDatabase } from '../../src/db/connection.js';
import { QueryDeadlineError } from '../../src/db/deadline.js';
import { inPipelinedTransaction, inTransaction } from '../../src/db/page-transaction.js';
import { startFreezableProxy } from '../support/process/freezable-proxy.js';
import { createTestDatabase, postgresReachable, type TestDatabase } from '../support/db.js';
import { truncateStore } from '../support/sync/fixtures.js';

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
  // these tests use feed_checkpoints as a plain table: without the feed `default` migrate registers
  await db.execute(sql`delete from intake_sync.feed_checkpoints`);
});

const insertFeed = (feed: string) => sql`insert into intake_sync.feed_checkpoints (feed) values (${feed}::text) returning feed`;
const feeds = async () =>
  (await queryRows<{ feed: string }>(db, sql`select feed from intake_sync.feed_checkpoints order by feed`)).map((r) => r.feed);

describe('inTransaction', () => {
  test('commits every statement', async () => {
    const rows = await inTransaction(db, async (run) => {
      await run(insertFeed('a'));
      return run<{ feed: string }>(insertFeed('b'));
    });
    expect(rows).toEqual([{ feed: 'b' }]);
    expect(await feeds()).toEqual(['a', 'b']);
  });

  test('a failing last statement rolls back the earlier ones', async () => {
    const failing = inTransaction(db, async (run) => {
      await run(insertFeed('a'));
      return run(sql`select 1 / 0`);
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
    for (let i = 0; i < 6; i++) await inTransaction(db, (run) => run(insertFeed(`x${i}`)));
    expect(await feeds()).toHaveLength(6);
  });

  test('statements queued together run in order within the transaction', async () => {
    const [first, second] = await inTransaction(db, (run) =>
      Promise.all([
        run<{ feed: string }>(insertFeed('a')),
        run<{ n: number }>(sql`select count(*)::int as n from intake_sync.feed_checkpoints`),
      ]),
    );
    expect(first).toEqual([{ feed: 'a' }]);
    expect(second).toEqual([{ n: 1 }]);
  });
});

const onPostgres = await postgresReachable();

describe('inPipelinedTransaction', () => {
  test("commits every statement and returns each one's rows in order", async () => {
    const { rows, statementsDoneAt } = await inPipelinedTransaction(db, [
      insertFeed('a'),
      insertFeed('b'),
      sql`select count(*)::int as n from intake_sync.feed_checkpoints`,
    ]);
    expect(rows).toEqual([[{ feed: 'a' }], [{ feed: 'b' }], [{ n: 2 }]]);
    expect(statementsDoneAt).toBeGreaterThan(0);
    expect(await feeds()).toEqual(['a', 'b']);
  });

  test('a failing statement rolls back those before it, and the COMMIT behind it ends the transaction', async () => {
    const failing = inPipelinedTransaction(db, [insertFeed('a'), sql`select 1 / 0`, insertFeed('b')]);
    await expect(failing).rejects.toSatisfy((e: Error) => /division by zero/.test(`${e.message} ${String(e.cause)}`));
    expect(await feeds()).toEqual([]);
    // no transaction left open on the page client: the next ones commit
    await inPipelinedTransaction(db, [insertFeed('c')]);
    await inTransaction(db, (run) => run(insertFeed('d')));
    expect(await feeds()).toEqual(['c', 'd']);
  });

  test.skipIf(!onPostgres)('BEGIN, the statements and COMMIT reach the server as one flight', async () => {
    const target = new URL(tdb.url as string);
    const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const viaProxy = new URL(tdb.url as string);
    viaProxy.port = String(proxy.port);
    const proxied = await openDatabase({ url: viaProxy.toString(), max: 1 });
    try {
      // warm: the connection is open and the statements prepared
      await inPipelinedTransaction(proxied.db, [insertFeed('warm'), sql`select 1`]);
      // nothing flows after the client's next write, answers included: a transaction that needed a second
      // write (a COMMIT sent once the statements answered) would never commit
      proxy.freezeAfterNextClientWrite();
      await expect(inPipelinedTransaction(proxied.db, [insertFeed('one-flight'), sql`select 1`], 500)).rejects.toBeInstanceOf(
        QueryDeadlineError,
      );
      expect(await feeds()).toEqual(['one-flight', 'warm']);
    } finally {
      await proxied.close();
      await proxy.close();
    }
  });
});

describe('inTransaction when the server ends the session', () => {
  test.skipIf(!onPostgres)('terminated backends fail at most that transaction; the next ones reconnect and the process lives', async () => {
    await inTransaction(db, (run) => run(insertFeed('before')));
    const killer = postgres(tdb.url as string, { max: 1, onnotice: () => {} });
    try {
      // from another session, what a DBA or a failover does to every worker connection
      await killer`select pg_terminate_backend(pid) from pg_stat_activity
                     where datname = current_database() and pid <> pg_backend_pid()`;
      const outcomes: string[] = [];
      for (let i = 0; i < 3; i++) {
        await inTransaction(db, (run) => run(insertFeed(`after-${i}`))).then(
          () => outcomes.push('ok'),
          () => outcomes.push('failed'),
        );
      }
      // the first may fail on a dead socket; the pool must recover for the rest
      expect(outcomes.slice(1)).toEqual(['ok', 'ok']);
    } finally {
      await killer.end();
    }
  });
});

describe('inTransaction when the server stops answering', () => {
  test.skipIf(!onPostgres)('the transaction fails at its deadline, and the next one runs on a fresh connection', async () => {
    const target = new URL(tdb.url as string);
    const proxy = await startFreezableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    const viaProxy = new URL(tdb.url as string);
    viaProxy.port = String(proxy.port);
    const frozenDb = await openDatabase({ url: viaProxy.toString(), max: 1 });
    try {
      await inTransaction(frozenDb.db, (run) => run(insertFeed('before')));
      // what a silent network partition (or a stranded postgres.js write) looks like from the worker
      proxy.freezeAfterNextClientWrite();
      // the frozen server never answers: failing at all (not at the test's timeout) is the deadline's work
      await expect(inTransaction(frozenDb.db, (run) => run(insertFeed('lost')), 300)).rejects.toBeInstanceOf(QueryDeadlineError);
      await inTransaction(frozenDb.db, (run) => run(insertFeed('after')), 5_000);
      expect(await feeds()).toEqual(['after', 'before']);
    } finally {
      await frozenDb.close();
      await proxy.close();
    }
  });
});

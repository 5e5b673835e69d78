import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeConnection } from '../../src/db/connection-probe.js';
import { openDatabase, queryRows, type Database } from '../../src/db/connection.js';
import { inTransaction } from '../../src/db/page-transaction.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { NEEDS_PGBOUNCER, PGBOUNCER, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';

const ready = (await postgresReachable()) && PGBOUNCER !== undefined;
if (!ready) console.warn(`SKIPPED test/db/pooler.test.ts: ${PGBOUNCER ? NEEDS_POSTGRES : NEEDS_PGBOUNCER}`);
const TTL_MS = 15_000;

describe.skipIf(!ready)(`behind PgBouncer 1.18 (${NEEDS_PGBOUNCER})`, () => {
  let test: TestDatabase;
  let transactionPool: PgBouncer;
  let sessionPool: PgBouncer;
  const opened: Database[] = [];

  beforeAll(async () => {
    test = await createTestDatabase('pooler');
    // a pool of two server connections: other clients' transactions move ours between them
    [transactionPool, sessionPool] = await Promise.all([startPgBouncer('transaction', 2), startPgBouncer('session', 4)]);
  });
  afterAll(async () => {
    for (const database of opened) await database.close().catch(() => {});
    await Promise.all([transactionPool?.stop(), sessionPool?.stop()]);
    await test?.drop();
  });

  it('the probe tells a direct connection, a session pooler and a transaction pooler apart', async () => {
    const url = test.url as string;
    const [direct, transaction, session] = await Promise.all([
      probeConnection(url),
      probeConnection(transactionPool.through(url)),
      probeConnection(sessionPool.through(url)),
    ]);
    expect(direct).toMatchObject({ acceptsStartupParameters: true, transactionPooling: false });
    expect(transaction).toMatchObject({ acceptsStartupParameters: false, transactionPooling: true });
    expect(session).toMatchObject({ acceptsStartupParameters: false, transactionPooling: false });
    // one database: the lease URL check compares these
    expect([transaction.database, transaction.serverStartedAt]).toEqual([direct.database, direct.serverStartedAt]);
    console.log(`probe evidence behind the transaction pooler: ${transaction.evidence}`);
  });

  it('the direct-connection pool does not even connect through PgBouncer (its startup parameter is refused)', async () => {
    const database = await openDatabase({ url: transactionPool.through(test.url as string), idleInTransactionTimeoutMs: TTL_MS });
    opened.push(database);
    const error = await database.db.execute(sql`select 1`).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    // drizzle wraps the driver's error
    expect(String((error?.cause as Error | undefined)?.message ?? error?.message)).toMatch(
      /unsupported startup parameter: idle_in_transaction_session_timeout/,
    );
  });

  it('pooled page transactions: unnamed statements, the idle timeout set per transaction, whatever server connection they get', async () => {
    const database = await openDatabase({
      url: transactionPool.through(test.url as string),
      idleInTransactionTimeoutMs: TTL_MS,
      pooled: true,
    });
    opened.push(database);
    // another client keeps taking server connections between our transactions
    const other = postgres(transactionPool.through(test.url as string), { max: 2, prepare: false, fetch_types: false, onnotice: () => {} });
    const pids = new Set<number>();
    try {
      for (let i = 0; i < 20; i += 1) {
        // every other round a transaction of another client holds a server connection during ours
        const busy =
          i % 2 === 0
            ? other.begin(async (tx) => {
                await tx`select pg_sleep(0.02)`;
              })
            : other`select 1`;
        const [row] = await inTransaction(database.db, async (run) =>
          run<{ i: number; timeout: string; pid: number; prepared: number }>(
            sql`select ${i}::int as i, current_setting('idle_in_transaction_session_timeout') as timeout,
                       pg_backend_pid() as pid, (select count(*)::int from pg_prepared_statements) as prepared`,
          ),
        );
        await busy;
        expect(row).toMatchObject({ i, timeout: '15s', prepared: 0 });
        pids.add(Number(row?.pid));
      }
      // outside a page transaction the server connection has no such timeout: it was SET LOCAL
      const [outside] = await queryRows<{ timeout: string }>(
        database.db,
        sql`select current_setting('idle_in_transaction_session_timeout') as timeout`,
      );
      expect(outside?.timeout).toBe('0');
    } finally {
      await other.end({ timeout: 1 });
    }
    // the transactions really moved between server connections
    expect(pids.size).toBeGreaterThan(1);
  });

  it('directly connected, page statements stay prepared and the timeout comes from the startup (unchanged)', async () => {
    const database = await openDatabase({ url: test.url as string, idleInTransactionTimeoutMs: TTL_MS });
    opened.push(database);
    for (let i = 0; i < 2; i += 1) {
      const [row] = await inTransaction(database.db, async (run) =>
        run<{ timeout: string; prepared: number }>(
          sql`select ${i}::int as i, current_setting('idle_in_transaction_session_timeout') as timeout, (select count(*)::int from pg_prepared_statements) as prepared`,
        ),
      );
      expect(row?.timeout).toBe('15s');
      expect(row?.prepared).toBeGreaterThan(0);
    }
    const [outside] = await queryRows<{ timeout: string }>(
      database.db,
      sql`select current_setting('idle_in_transaction_session_timeout') as timeout`,
    );
    expect(outside?.timeout).toBe('15s');
  });
});

import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import { queryRows, type Db } from '../db/connection.js';
import { isConnectionLoss } from '../db/connection-loss.js';
import { withDeadline } from '../db/deadline.js';
import { pageClientOf, pageClientSettingsOf, replacePageClient, type PageClientSettings } from '../db/page-client.js';

/** Runs one statement of the transaction and returns its rows. */
export type RunStatement = <T extends Record<string, unknown>>(query: SQL) => Promise<T[]>;

const dialect = new PgDialect();

/**
 * A page transaction with no answer within this is abandoned with its connection (replaced
 * like a lost one): the server commits or rolls it back on its own, and the checkpoint's
 * compare-and-set makes either safe. Generous, because a page may queue legitimately behind
 * a large registration holding the match lock.
 */
export const PAGE_TRANSACTION_DEADLINE_MS = 120_000;

// one transaction at a time per page client: its single connection is the transaction
const queues = new WeakMap<postgres.Sql, Promise<unknown>>();

/**
 * Runs `body` in one transaction, rolled back when it throws, resolved once
 * committed. On Postgres it runs on the database's page client (a single
 * connection, see src/db/page-client.ts): BEGIN is pipelined with the first
 * statements, statements issued together (Promise.all) are pipelined too, and
 * they are prepared — the page statements are the same text every time, so the
 * connection parses and plans them once, where drizzle's execute() would describe
 * and plan every call. A session lost mid-transaction rejects the call and the
 * client is replaced for the next one. Embedded PGlite goes through drizzle's transaction.
 */
export async function inTransaction<T>(
  db: Db,
  body: (run: RunStatement) => Promise<T>,
  deadlineMs = PAGE_TRANSACTION_DEADLINE_MS,
): Promise<T> {
  const client = pageClientOf(db);
  if (!client) return db.transaction((tx) => body((query) => queryRows(tx, query)));
  const previous = queues.get(client) ?? Promise.resolve();
  const current = previous
    .catch(() => {})
    .then(() => withDeadline(onConnection(client, pageClientSettingsOf(db), body), deadlineMs, 'page transaction'))
    .catch((error: unknown) => {
      // the session is gone (or stopped answering), and with it the transaction: nothing to roll back, and the client is not reused
      if (isConnectionLoss(error)) replacePageClient(db, client);
      throw error;
    });
  queues.set(client, current);
  return current;
}

async function onConnection<T>(client: postgres.Sql, settings: PageClientSettings, body: (run: RunStatement) => Promise<T>): Promise<T> {
  const run: RunStatement = async <R extends Record<string, unknown>>(query: SQL) => {
    const { sql, params } = dialect.sqlToQuery(query);
    // postgres.js queries are lazy; execute() sends them now, so they go out in call order
    return (await client.unsafe(sql, params as postgres.ParameterOrJSON<never>[], { prepare: settings.prepare }).execute()) as unknown as R[];
  };
  const begun = settings.prepare
    ? client.unsafe('begin').execute()
    : // behind a pooler: the server connection of this transaction gets the timeout for this transaction only
      // (an integer this code computed, never input)
      client.unsafe(`begin; set local idle_in_transaction_session_timeout = ${Math.round(settings.idleInTransactionTimeoutMs)}`).simple().execute();
  let result: T;
  try {
    [, result] = await Promise.all([begun, body(run)]);
  } catch (error) {
    // queued behind whatever is still in flight, so it ends this transaction
    if (!isConnectionLoss(error)) await client.unsafe('rollback').catch(() => {});
    throw error;
  }
  await client.unsafe('commit');
  return result;
}

import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import { queryRows, type Db } from '../db/connection.js';
import { isConnectionLoss } from '../db/connection-loss.js';

/** Runs one statement of the transaction and returns its rows. */
export type RunStatement = <T extends Record<string, unknown>>(query: SQL) => Promise<T[]>;

const dialect = new PgDialect();

function postgresJsClient(db: Db): postgres.Sql | undefined {
  // drizzle exposes the driver client as $client; postgres.js is the one with begin() and reserve()
  const client = (db as { $client?: unknown }).$client;
  return typeof client === 'function' && typeof (client as Partial<postgres.Sql>).reserve === 'function'
    ? (client as postgres.Sql)
    : undefined;
}

/**
 * Runs `body` in one transaction, rolled back when it throws, resolved once
 * committed. On postgres.js the statements are prepared: the page statements are
 * the same text every time, so a connection parses and plans them once, where
 * drizzle's execute() would describe and plan every call. Statements issued
 * together (Promise.all) are pipelined on the connection.
 * Other drivers (PGlite) go through drizzle's transaction unchanged.
 *
 * When the session dies mid-transaction (backend terminated, server restart) the
 * server has already rolled the transaction back. postgres.js 3.4 would still send
 * ROLLBACK on the dead connection, and writing to its null socket throws from a
 * timer, killing the process (porsager/postgres#1208; reserve() has the same flaw).
 * So on a connection loss the body is parked, never settling, and this call
 * rejects with the loss itself: the driver never gets to write to the dead socket.
 */
export async function inTransaction<T>(db: Db, body: (run: RunStatement) => Promise<T>): Promise<T> {
  const client = postgresJsClient(db);
  if (!client) return db.transaction((tx) => body((query) => queryRows(tx, query)));
  let sessionLost!: (error: unknown) => void;
  const lost = new Promise<never>((_, reject) => {
    sessionLost = reject;
  });
  const transaction = client.begin(async (tx) => {
    const run: RunStatement = async <R extends Record<string, unknown>>(query: SQL) => {
      const { sql, params } = dialect.sqlToQuery(query);
      try {
        return (await tx.unsafe(sql, params as postgres.ParameterOrJSON<never>[], { prepare: true })) as unknown as R[];
      } catch (error) {
        if (!isConnectionLoss(error)) throw error;
        sessionLost(error);
        return new Promise<never>(() => {});
      }
    };
    // begin()'s typing unwraps arrays of queries; wrapping keeps T intact whatever body returns
    return { value: await body(run) };
  });
  // begin() also rejects on its own when the connection closes; the first rejection wins
  transaction.catch(() => {});
  const result = await Promise.race([transaction, lost]);
  return (result as unknown as { value: T }).value;
}

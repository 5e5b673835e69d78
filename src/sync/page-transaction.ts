import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import { queryRows, type Db } from '../db/connection.js';

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
 *
 * This goes through postgres.js begin(), not reserve(): 3.4 crashes the process
 * ("reading 'write'" of a null socket) when a reserved connection's backend is
 * terminated, whereas begin() rejects and the pool reconnects.
 * Other drivers (PGlite) go through drizzle's transaction unchanged.
 */
export async function inTransaction<T>(db: Db, body: (run: RunStatement) => Promise<T>): Promise<T> {
  const client = postgresJsClient(db);
  if (!client) return db.transaction((tx) => body((query) => queryRows(tx, query)));
  const result = await client.begin(async (tx) => {
    const run: RunStatement = async <R extends Record<string, unknown>>(query: SQL) => {
      const { sql, params } = dialect.sqlToQuery(query);
      return (await tx.unsafe(sql, params as postgres.ParameterOrJSON<never>[], { prepare: true })) as unknown as R[];
    };
    // begin()'s typing unwraps arrays of queries; wrapping keeps T intact whatever body returns
    return { value: await body(run) };
  });
  return (result as unknown as { value: T }).value;
}

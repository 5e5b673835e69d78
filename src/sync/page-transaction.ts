import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import { queryRows, type Db } from '../db/connection.js';

/** Runs one statement of the transaction and returns its rows. */
export type RunStatement = <T extends Record<string, unknown>>(query: SQL) => Promise<T[]>;

const dialect = new PgDialect();

function postgresJsClient(db: Db): postgres.Sql | undefined {
  // drizzle exposes the driver client as $client; postgres.js is the one with reserve()
  const client = (db as { $client?: unknown }).$client;
  return typeof client === 'function' && typeof (client as Partial<postgres.Sql>).reserve === 'function'
    ? (client as postgres.Sql)
    : undefined;
}

/**
 * Runs `body` in one transaction, rolled back when it throws. On postgres.js the
 * statements are prepared (the page statements are the same text every time, so a
 * connection parses and plans them once; drizzle's execute() would describe and
 * plan every call) and BEGIN is pipelined with the first statement instead of
 * costing a round trip of its own. Other drivers (PGlite) go through drizzle.
 */
export async function inTransaction<T>(db: Db, body: (run: RunStatement) => Promise<T>): Promise<T> {
  const client = postgresJsClient(db);
  if (!client) return db.transaction((tx) => body((query) => queryRows(tx, query)));
  const connection = await client.reserve();
  try {
    const begun = connection.unsafe('begin');
    const run: RunStatement = async <R extends Record<string, unknown>>(query: SQL) => {
      const { sql, params } = dialect.sqlToQuery(query);
      return (await connection.unsafe(sql, params as postgres.ParameterOrJSON<never>[], { prepare: true })) as unknown as R[];
    };
    let result: T;
    try {
      [, result] = await Promise.all([begun, body(run)]);
    } catch (error) {
      // queued behind whatever is still in flight on this connection, so it ends this transaction
      await connection.unsafe('rollback').catch(() => {});
      throw error;
    }
    await connection.unsafe('commit');
    return result;
  } finally {
    connection.release();
  }
}

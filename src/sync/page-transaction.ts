import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import { queryRows, type Db } from '../db/connection.js';

export interface RunOptions {
  /**
   * the transaction's last statement: COMMIT may be sent right behind it, so the
   * body must not throw after it resolves (the work is committed by then)
   */
  last?: boolean;
}

/** Runs one statement of the transaction and returns its rows. */
export type RunStatement = <T extends Record<string, unknown>>(query: SQL, options?: RunOptions) => Promise<T[]>;

const dialect = new PgDialect();

function postgresJsClient(db: Db): postgres.Sql | undefined {
  // drizzle exposes the driver client as $client; postgres.js is the one with reserve()
  const client = (db as { $client?: unknown }).$client;
  return typeof client === 'function' && typeof (client as Partial<postgres.Sql>).reserve === 'function'
    ? (client as postgres.Sql)
    : undefined;
}

/**
 * Runs `body` in one transaction, rolled back when it throws, resolved once
 * committed. On postgres.js the statements are prepared (the page statements are
 * the same text every time, so a connection parses and plans them once; drizzle's
 * execute() would describe and plan every call), BEGIN travels with the first
 * statement and COMMIT with the `last` one, so a page costs two round trips.
 * Other drivers (PGlite) go through drizzle's transaction unchanged.
 */
export async function inTransaction<T>(db: Db, body: (run: RunStatement) => Promise<T>): Promise<T> {
  const client = postgresJsClient(db);
  if (!client) return db.transaction((tx) => body((query) => queryRows(tx, query)));
  const connection = await client.reserve();
  let commit: Promise<unknown> | undefined;
  const run: RunStatement = async <R extends Record<string, unknown>>(query: SQL, options: RunOptions = {}) => {
    if (commit) throw new Error('a statement was run after the last statement of the transaction');
    const { sql, params } = dialect.sqlToQuery(query);
    // postgres.js queries are lazy; execute() sends them now, so they go out in call order
    const rows = connection.unsafe(sql, params as postgres.ParameterOrJSON<never>[], { prepare: true }).execute();
    if (options.last) {
      // after a failed statement Postgres answers this COMMIT with a rollback: nothing half-applied
      commit = connection.unsafe('commit').execute();
      commit.catch(() => {});
    }
    return (await rows) as unknown as R[];
  };
  try {
    const begun = connection.unsafe('begin').execute();
    let result: T;
    try {
      [, result] = await Promise.all([begun, body(run)]);
    } catch (error) {
      // queued behind whatever is still in flight on this connection, so it ends this transaction
      await connection.unsafe('rollback').catch(() => {});
      throw error;
    }
    await (commit ?? connection.unsafe('commit'));
    return result;
  } finally {
    connection.release();
  }
}

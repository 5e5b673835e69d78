import type { SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type postgres from 'postgres';
import { queryRows, type Db } from '../db/connection.js';

/** Runs one statement of the transaction and returns its rows. */
export type RunStatement = <T extends Record<string, unknown>>(query: SQL) => Promise<T[]>;

const dialect = new PgDialect();

function postgresJsClient(db: Db): postgres.Sql | undefined {
  // drizzle exposes the driver client as $client; postgres.js is the one with begin()
  const client = (db as { $client?: unknown }).$client;
  return typeof client === 'function' && typeof (client as Partial<postgres.Sql>).begin === 'function'
    ? (client as postgres.Sql)
    : undefined;
}

/**
 * Runs `body` in one transaction. On postgres.js the statements are prepared:
 * the page statements are the same text every time, so each connection parses
 * and plans them once and every later page is a single bind/execute round trip
 * (drizzle's execute() would describe and plan every call). Other drivers (PGlite)
 * go through drizzle unchanged.
 */
export async function inTransaction<T>(db: Db, body: (run: RunStatement) => Promise<T>): Promise<T> {
  const client = postgresJsClient(db);
  if (!client) return db.transaction((tx) => body((query) => queryRows(tx, query)));
  const result = await client.begin((tx) =>
    body(async <R extends Record<string, unknown>>(query: SQL) => {
      const { sql, params } = dialect.sqlToQuery(query);
      return (await tx.unsafe(sql, params as postgres.ParameterOrJSON<never>[], { prepare: true })) as unknown as R[];
    }),
  );
  return result as T;
}

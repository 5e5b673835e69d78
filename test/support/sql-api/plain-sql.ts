import postgres from 'postgres';
import type { TestDatabase } from '../db.js';

/**
 * A text query with $n parameters, as an application in any language would send it. JSON goes as
 * text (`$1::text::jsonb`): postgres.js would encode a string again for a parameter typed jsonb.
 */
export type PlainQuery = <T extends Record<string, unknown> = Record<string, unknown>>(text: string, params?: unknown[]) => Promise<T[]>;

export interface PlainSql {
  query: PlainQuery;
  /** BEGIN, fn, COMMIT; ROLLBACK when fn throws (the error is rethrown) */
  transaction<R>(fn: (query: PlainQuery) => Promise<R>): Promise<R>;
  close(): Promise<void>;
}

/**
 * A client of its own on the test database, outside drizzle: postgres.js on a real server
 * (sql.unsafe: plain text and parameters), the PGlite instance itself otherwise.
 */
export function plainSql(tdb: TestDatabase): PlainSql {
  if (tdb.url) {
    const sql = postgres(tdb.url, { max: 2, onnotice: () => {}, fetch_types: false });
    const on =
      (client: postgres.Sql | postgres.TransactionSql): PlainQuery =>
      async <T extends Record<string, unknown>>(text: string, params: unknown[] = []) =>
        (await client.unsafe(text, params as postgres.ParameterOrJSON<never>[])) as unknown as T[];
    return {
      query: on(sql),
      transaction: async <R>(fn: (query: PlainQuery) => Promise<R>) => (await sql.begin((tx) => fn(on(tx)))) as R,
      close: () => sql.end({ timeout: 5 }),
    };
  }
  const pglite = tdb.database.pglite;
  if (!pglite) throw new Error('plainSql: neither a server URL nor a PGlite instance');
  const on =
    (client: Pick<typeof pglite, 'query'>): PlainQuery =>
    async <T extends Record<string, unknown>>(text: string, params: unknown[] = []) =>
      (await client.query<T>(text, params)).rows;
  return {
    query: on(pglite),
    transaction: <R>(fn: (query: PlainQuery) => Promise<R>) => pglite.transaction((tx) => fn(on(tx))),
    close: async () => {},
  };
}

/** The error a statement raised, for assertions on its SQLSTATE and message. */
export async function sqlError(statement: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await statement;
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    return { code: String(code), message: String(message) };
  }
  throw new Error('expected the statement to fail');
}

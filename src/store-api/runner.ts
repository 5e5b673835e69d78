import { type SQL, sql } from 'drizzle-orm';
import type postgres from 'postgres';
import { type Db, queryRows } from '../db/connection.js';
import { namesOf } from '../db/store-names.js';

/**
 * What every call of the SQL API runs on: the daemon's pool and a CLI's store (a drizzle handle,
 * runnerOfDb), a console user's own connection or a caller's postgres.js client or transaction
 * (runnerOfSql). Statements are text with positional parameters ($1, $2, ...), every value bound.
 */
export interface SqlApiRunner {
  /** the deployment's schema (DATABASE_SCHEMA), checked to be a plain name where the runner was made */
  readonly schema: string;
  /** one statement, its rows; `prepare` asks for a named prepared statement where the driver offers one */
  query<T extends object>(text: string, params?: readonly unknown[], options?: { prepare?: boolean }): Promise<T[]>;
  /** `fn` in one transaction of its own, committed when it resolves */
  transaction<T>(fn: (tx: SqlApiRunner) => Promise<T>): Promise<T>;
}

/** A function or view of the SQL API, qualified with the runner's schema, for statement text. */
export function qualified(runner: Pick<SqlApiRunner, 'schema'>, name: string): string {
  return `"${runner.schema}"."${name}"`;
}

/** A runner over a postgres.js client (a transaction joins it: `begin` then nests as a savepoint). */
export function runnerOfSql(client: postgres.Sql | postgres.TransactionSql, schema: string): SqlApiRunner {
  return {
    schema,
    query: async <T extends object>(text: string, params: readonly unknown[] = [], options: { prepare?: boolean } = {}) =>
      (await client.unsafe(text, params as never[], options.prepare ? { prepare: true } : undefined)) as unknown as T[],
    transaction: async <T>(fn: (tx: SqlApiRunner) => Promise<T>) => {
      // a transaction handle has savepoint(), a client begin(): either way fn's statements commit together
      const run = (tx: postgres.TransactionSql) => fn(runnerOfSql(tx, schema));
      if ('savepoint' in client) return (await client.savepoint(run)) as T;
      return (await client.begin(run)) as T;
    },
  };
}

/** The statement text with its $n placeholders as drizzle parameters (both drivers bind them). */
function drizzleStatement(text: string, params: readonly unknown[]): SQL {
  const parts = text.split(/\$(\d+)/);
  const chunks: SQL[] = [];
  for (let i = 0; i < parts.length; i++) {
    if (i % 2 === 0) chunks.push(sql.raw(parts[i] ?? ''));
    else {
      const index = Number(parts[i]) - 1;
      if (index < 0 || index >= params.length) throw new Error(`statement names $${parts[i]} but has ${params.length} parameters`);
      chunks.push(sql`${params[index]}`);
    }
  }
  return sql.join(chunks, sql.raw(''));
}

/** A runner over a drizzle handle (the daemon's pool, a CLI command's store; Postgres or PGlite). */
export function runnerOfDb(db: Db, schema: string = namesOf(db).schema): SqlApiRunner {
  return {
    schema,
    // async: a statement that names a parameter it lacks rejects, as a server error would
    query: async <T extends object>(text: string, params: readonly unknown[] = []) =>
      (await queryRows<T & Record<string, unknown>>(db, drizzleStatement(text, params))) as T[],
    transaction: <T>(fn: (tx: SqlApiRunner) => Promise<T>) => db.transaction((tx) => fn(runnerOfDb(tx as unknown as Db, schema))),
  };
}

/** What a call of this room is handed: a runner, or a drizzle handle (the daemon's, a CLI command's store). */
export type RunnerSource = SqlApiRunner | Db;

/** The runner a call runs on. */
export function runnerOf(source: RunnerSource): SqlApiRunner {
  return 'execute' in source ? runnerOfDb(source) : source;
}

/**
 * A row limit written into the statement text (a literal keeps the planner's row estimate, as the
 * pages' query plans were measured with), checked to be a positive integer first.
 */
export function rowLimit(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`row limit: a positive integer (got ${limit})`);
  return limit;
}

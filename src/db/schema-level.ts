import { sql } from 'drizzle-orm';
import { queryRows, type Database } from './connection.js';
import { LEDGER_TABLE } from './migrate.js';
import { readMigrationFiles, type MigrationFile } from './migration-files.js';

/** Where the deployment's schema stands against this build's migrations (the start line, doctor). */
export interface SchemaLevel {
  /** the newest migration the ledger records (null: no ledger, nothing migrated) */
  latest: string | null;
  applied: number;
  /** migrations this build ships */
  expected: number;
  /** this build's newest migration */
  expectedLatest: string | null;
  /** this build's migrations the ledger lacks, in order */
  pending: string[];
  /** ledger rows this build does not know (a newer version migrated it) */
  unknown: number;
}

/** Reads the ledger (SELECT on it is a runtime grant) and compares it with this build's files. */
export async function readSchemaLevel(database: Database, files: readonly MigrationFile[] = readMigrationFiles()): Promise<SchemaLevel> {
  const schema = database.names.schema;
  const [present] = await queryRows<{ present: boolean }>(
    database.db,
    sql`select to_regclass(${`"${schema}"."${LEDGER_TABLE}"`}) is not null as present`,
  );
  const rows = present?.present
    ? await queryRows<{ hash: string; tag: string | null }>(
        database.db,
        sql.raw(`select hash, tag from "${schema}"."${LEDGER_TABLE}" order by id`),
      )
    : [];
  return schemaLevelOf(rows, files);
}

/** The comparison itself. Pure. */
export function schemaLevelOf(ledger: ReadonlyArray<{ hash: string; tag: string | null }>, files: readonly MigrationFile[]): SchemaLevel {
  const applied = new Set(ledger.map((row) => row.hash));
  const known = new Set(files.map((f) => f.hash));
  const last = ledger.at(-1);
  return {
    latest: last ? (last.tag ?? last.hash.slice(0, 12)) : null,
    applied: ledger.length,
    expected: files.length,
    expectedLatest: files.at(-1)?.tag ?? null,
    pending: files.filter((f) => !applied.has(f.hash)).map((f) => f.tag),
    unknown: ledger.filter((row) => !known.has(row.hash)).length,
  };
}

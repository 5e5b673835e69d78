import { fileURLToPath } from 'node:url';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { PgliteDatabase } from 'drizzle-orm/pglite';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import type { PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import type { Database } from './connection.js';

/** drizzle/ sits two levels above both src/db and dist/db. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** Applies every pending migration from drizzle/ (idempotent). */
export async function runMigrations(database: Database): Promise<void> {
  if (database.kind === 'postgres') {
    await migratePostgres(database.db as unknown as PostgresJsDatabase, { migrationsFolder: MIGRATIONS_FOLDER });
  } else {
    await migratePglite(database.db as unknown as PgliteDatabase, { migrationsFolder: MIGRATIONS_FOLDER });
  }
}

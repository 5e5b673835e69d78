import type { Database } from '../db/connection.js';
import { runMigrations } from '../db/migrate.js';
import { LEASE_NAMESPACE } from '../sync/lease.js';

// second half of the advisory key taken while migrating; feeds hash to other values in practice
const MIGRATION_LOCK_KEY = 0;

/**
 * Applies pending migrations, serialised across processes: workers started
 * together on a fresh database would otherwise race to create the same tables.
 */
export async function migrateOnStart(database: Database): Promise<void> {
  if (database.kind !== 'postgres' || !database.sql) {
    await runMigrations(database);
    return;
  }
  const connection = await database.sql.reserve();
  try {
    await connection`select pg_advisory_lock(${LEASE_NAMESPACE}::int4, ${MIGRATION_LOCK_KEY}::int4)`;
    try {
      await runMigrations(database);
    } finally {
      await connection`select pg_advisory_unlock(${LEASE_NAMESPACE}::int4, ${MIGRATION_LOCK_KEY}::int4)`;
    }
  } finally {
    connection.release();
  }
}

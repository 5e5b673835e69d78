import postgres from 'postgres';
import type { Database } from '../db/connection.js';
import { runMigrations } from '../db/migrate.js';
import { LEASE_NAMESPACE } from '../sync/lease.js';

// second half of the advisory key taken while migrating; feeds hash to other values in practice
const MIGRATION_LOCK_KEY = 0;

/**
 * Applies pending migrations, serialised across processes: workers started
 * together on a fresh database would otherwise race to create the same tables.
 * The lock is held on a connection of its own, not one reserved from the pool:
 * postgres.js 3.4's reserve() never resolves on a fresh connection when
 * fetch_types is off (see connection.ts for why it is).
 */
export async function migrateOnStart(database: Database, url: string | undefined): Promise<void> {
  if (database.kind !== 'postgres' || !url) {
    await runMigrations(database);
    return;
  }
  const lock = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10, fetch_types: false });
  try {
    await lock.unsafe(`select pg_advisory_lock(${LEASE_NAMESPACE}, ${MIGRATION_LOCK_KEY})`);
    try {
      await runMigrations(database);
    } finally {
      await lock.unsafe(`select pg_advisory_unlock(${LEASE_NAMESPACE}, ${MIGRATION_LOCK_KEY})`);
    }
  } finally {
    await lock.end({ timeout: 1 });
  }
}

import { join } from 'node:path';
import type { Config } from '../config.js';
import { openDatabase, type Database } from '../db/connection.js';
import { migrateOnStart } from './migrate-on-start.js';

/**
 * The store the configuration points at: DATABASE_URL, or embedded PGlite under
 * DATA_DIR/pglite. Pending migrations are applied (serialised across processes).
 */
export async function openStoreFromConfig(config: Config): Promise<Database> {
  const database = await openDatabase(
    config.DATABASE_URL
      ? // a frozen leader's open page transaction ends with its lease, so the successor's CAS is not blocked
        { url: config.DATABASE_URL, idleInTransactionTimeoutMs: config.LEASE_TTL_MS }
      : { dataDir: join(config.DATA_DIR, 'pglite') },
  );
  try {
    await migrateOnStart(database, config.DATABASE_URL);
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
  return database;
}

/** Opens the configured store, runs `body` with it and always closes it. */
export async function withStore<T>(config: Config, body: (database: Database) => Promise<T>): Promise<T> {
  const database = await openStoreFromConfig(config);
  try {
    return await body(database);
  } finally {
    await database.close();
  }
}

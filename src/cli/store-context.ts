import { join } from 'node:path';
import type { Config } from '../config.js';
import { openDatabase, type Database, type OpenDatabaseOptions } from '../db/connection.js';
import { migrateOnStart } from './migrate-on-start.js';

/** Where the configuration points: DATABASE_URL, or embedded PGlite under DATA_DIR/pglite. */
export function storeOptions(config: Config): OpenDatabaseOptions {
  return config.DATABASE_URL
    ? // a frozen leader's open page transaction ends with its lease, so the successor's CAS is not blocked
      { url: config.DATABASE_URL, idleInTransactionTimeoutMs: config.LEASE_TTL_MS, schema: config.DATABASE_SCHEMA }
    : { dataDir: join(config.DATA_DIR, 'pglite'), schema: config.DATABASE_SCHEMA };
}

/**
 * The store the configuration points at: DATABASE_URL, or embedded PGlite under
 * DATA_DIR/pglite, in the schema DATABASE_SCHEMA. Pending migrations are applied (serialised
 * across processes) unless MIGRATE_ON_START=false, which only checks the schema is current;
 * `options.migrate` overrides it (`migrate` always migrates).
 */
export async function openStoreFromConfig(config: Config, options: { migrate?: boolean } = {}): Promise<Database> {
  const database = await openDatabase(storeOptions(config));
  try {
    await migrateOnStart(database, { migrate: options.migrate ?? config.MIGRATE_ON_START });
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

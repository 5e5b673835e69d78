import { join } from 'node:path';
import { ConfigError, type Config } from '../config.js';
import { openDatabase, type Database, type OpenDatabaseOptions } from '../db/connection.js';
import type { SessionPlan } from '../db/session-plan.js';
import { assertSupportedServer } from '../db/server-version.js';
import { probeSessions } from '../db/session-probe.js';
import { migrateOnStart } from './migrate-on-start.js';

/**
 * Where the configuration points: DATABASE_URL, or embedded PGlite under DATA_DIR/pglite.
 * `pooled`: DATABASE_URL goes through a connection pooler (see openStore).
 */
export function storeOptions(config: Config, pooled = false): OpenDatabaseOptions {
  return config.DATABASE_URL
    ? // a frozen leader's open page transaction ends with its lease, so the successor's CAS is not blocked
      {
        url: config.DATABASE_URL,
        idleInTransactionTimeoutMs: config.LEASE_TTL_MS,
        schema: config.DATABASE_SCHEMA,
        pooled,
        tls: { variable: 'DATABASE_URL', caFile: config.DATABASE_CA_FILE },
        timeouts: { lockTimeoutMs: config.DB_LOCK_TIMEOUT_MS, statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS },
      }
    : { dataDir: join(config.DATA_DIR, 'pglite'), schema: config.DATABASE_SCHEMA };
}

/** An open store and, on Postgres, how its sessions are laid out (pooler or not, where the lease goes). */
export interface OpenedStore {
  database: Database;
  /** undefined on embedded PGlite */
  sessions: SessionPlan | undefined;
}

/**
 * The store the configuration points at: DATABASE_URL, or embedded PGlite under
 * DATA_DIR/pglite, in the schema DATABASE_SCHEMA. DATABASE_URL is probed first: behind a
 * connection pooler the feed lease (a session advisory lock) needs LEASE_DATABASE_URL, and with
 * `options.lease` (run) a ConfigError (exit 2) says so before anything is read or written; a
 * LEASE_DATABASE_URL that is pooled or reaches another database is refused. Pending migrations are applied
 * (serialised across processes) unless MIGRATE_ON_START=false, which only checks the schema is
 * current; `options.migrate` overrides it (`migrate` always migrates).
 */
export async function openStore(config: Config, options: { migrate?: boolean; lease?: boolean } = {}): Promise<OpenedStore> {
  if (!config.DATABASE_URL && config.LEASE_DATABASE_URL) {
    throw new ConfigError(
      'invalid environment:\n  LEASE_DATABASE_URL: is only used with DATABASE_URL (embedded PGlite has no lease to place)',
    );
  }
  const sessions = config.DATABASE_URL
    ? await planSessionsFor(config.DATABASE_URL, config.LEASE_DATABASE_URL, config.DATABASE_CA_FILE)
    : undefined;
  // refused before anything is read or written: nothing may run a lease where it does not hold
  if (options.lease && sessions?.noSession)
    throw new ConfigError(`invalid environment:\n  ${sessions.noSession.variable}: ${sessions.noSession.message}`);
  const database = await openDatabase(storeOptions(config, sessions?.pooled ?? false));
  try {
    // before any migration: a statement the server cannot run must not be how the user learns its version
    await assertSupportedServer(database);
    await migrateOnStart(database, { migrate: options.migrate ?? config.MIGRATE_ON_START });
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
  return { database, sessions };
}

/** openStore() for commands that need only the database. */
export async function openStoreFromConfig(config: Config, options: { migrate?: boolean } = {}): Promise<Database> {
  return (await openStore(config, options)).database;
}

async function planSessionsFor(databaseUrl: string, leaseUrl: string | undefined, caFile: string | undefined): Promise<SessionPlan> {
  const probed = await probeSessions(databaseUrl, leaseUrl, caFile);
  if ('plan' in probed) return probed.plan;
  throw new ConfigError(`invalid environment:\n${probed.problems.map((p) => `  ${p.variable}: ${p.message}`).join('\n')}`);
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

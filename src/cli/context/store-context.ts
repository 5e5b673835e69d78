import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { ConfigError, type Config } from '../../config/config.js';
import { openDatabase, queryRows, type Database, type OpenDatabaseOptions } from '../../db/connection.js';
import { lockDataDir } from '../../db/data-dir-lock.js';
import { StoreNotReadyError } from '../../db/errors/store-not-ready-error.js';
import { LEDGER_TABLE } from '../../db/migrate.js';
import type { SessionPlan } from '../../db/session-plan.js';
import { assertSupportedServer } from '../../db/server-version.js';
import { probeSessions } from '../../db/session-probe.js';
import { migrateOnStart } from '../../daemon/migrate-on-start.js';
import { recordOwnerSettings } from '../../db/owner-settings.js';

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
  /** what migrate-on-open applied: migration tags, then `sql/api/<path>` (empty without `migrate`) */
  applied: readonly string[];
}

/**
 * The store the configuration points at: DATABASE_URL, or embedded PGlite under
 * DATA_DIR/pglite, in the schema DATABASE_SCHEMA. DATABASE_URL is probed first: behind a
 * connection pooler the feed lease (a lease row held by one session's backend) needs LEASE_DATABASE_URL, and with
 * `options.lease` (run) a ConfigError (exit 2) says so before anything is read or written; a
 * LEASE_DATABASE_URL that is pooled or reaches another database is refused.
 *
 * Only `options.migrate` (`migrate`, and `run` with MIGRATE_ON_START) creates or changes the schema
 * (serialised across processes). Every other command refuses (StoreNotReadyError, exit 2) a store
 * without the schema, naming `intake-sync migrate`, and creates nothing: not the schema, not a
 * PGlite directory. Embedded PGlite is locked for as long as it is open (lockDataDir): a second
 * process is refused naming the holder's pid.
 */
export async function openStore(
  config: Config,
  options: { migrate?: boolean; lease?: boolean; verifyOwnership?: boolean; inspectOnly?: boolean } = {},
): Promise<OpenedStore> {
  if (!config.DATABASE_URL && config.LEASE_DATABASE_URL) {
    throw new ConfigError(
      'LEASE_DATABASE_URL: is only used with DATABASE_URL (embedded PGlite has no lease to place): unset it or set DATABASE_URL',
    );
  }
  const migrate = options.migrate === true;
  const sessions = config.DATABASE_URL
    ? await planSessionsFor(config.DATABASE_URL, config.LEASE_DATABASE_URL, config.DATABASE_CA_FILE)
    : undefined;
  // refused before anything is read or written: nothing may run a lease where it does not hold
  if (options.lease && sessions?.noSession) throw new ConfigError(`${sessions.noSession.variable}: ${sessions.noSession.message}`);
  const release = config.DATABASE_URL ? () => {} : lockEmbeddedStore(config, migrate);
  let database: Database;
  try {
    database = await openDatabase(storeOptions(config, sessions?.pooled ?? false));
  } catch (error) {
    release();
    throw error;
  }
  let applied: readonly string[] = [];
  const close = database.close;
  database.close = async () => {
    try {
      await close();
    } finally {
      release();
    }
  };
  try {
    // before anything reads the schema: a statement the server cannot run must not be how the user learns its version
    await assertSupportedServer(database);
    // `run` with MIGRATE_ON_START=false keeps its own message (migrateOnStart: behind, ahead or missing)
    // `migrate --dry-run` reads the ledgers itself: neither a missing schema nor a pending migration is refused
    if (options.inspectOnly) return { database, sessions, applied: [] };
    if (!migrate && !options.lease) await requireInstalledSchema(database, config);
    applied = await migrateOnStart(database, { migrate, verifyOwnership: options.verifyOwnership === true });
    // the owner's RETAIN_AUDIT becomes the floor of every audit purge (only the owner can write it)
    if (migrate) await recordOwnerSettings(database.db, { retainAuditMs: config.RETAIN_AUDIT });
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
  return { database, sessions, applied };
}

/** The embedded store's lock; without `create` a missing DATA_DIR is refused, not made. */
function lockEmbeddedStore(config: Config, create: boolean): () => void {
  const dir = config.DATA_DIR;
  if (!create && !existsSync(join(dir, 'pglite'))) {
    throw new StoreNotReadyError(
      `no embedded store in DATA_DIR ${dir}: run \`intake-sync migrate\` (or \`intake-sync run\`) there first, or set DATABASE_URL to the database to use`,
    );
  }
  mkdirSync(dir, { recursive: true });
  return lockDataDir(dir).release;
}

/** Refuses a store without this deployment's schema: the command was pointed at the wrong database, or migrate never ran. */
async function requireInstalledSchema(database: Database, config: Config): Promise<void> {
  const schema = database.names.schema;
  const [usable] = await queryRows<{ unusable: boolean }>(
    database.db,
    sql`select (to_regnamespace(${`"${schema}"`}) is not null and not has_schema_privilege(${schema}, 'USAGE')) as unusable`,
  );
  // the schema is there but this role may not use it: migrateOnStart names the role it needs instead
  if (usable?.unusable) return;
  const [row] = await queryRows<{ present: boolean }>(
    database.db,
    sql`select to_regclass(${`"${schema}"."${LEDGER_TABLE}"`}) is not null as present`,
  );
  if (row?.present) return;
  const where = config.DATABASE_URL ? 'the database DATABASE_URL names' : `the embedded store in DATA_DIR ${config.DATA_DIR}`;
  throw new StoreNotReadyError(
    `${where} has no intake-sync schema "${schema}" (DATABASE_SCHEMA): run \`intake-sync migrate\` (as the owner role) first; ` +
      'no other command creates or changes the schema, so nothing was written',
  );
}

/** openStore() for commands that need only the database (they never migrate unless told to). */
export async function openStoreFromConfig(
  config: Config,
  options: { migrate?: boolean; verifyOwnership?: boolean } = {},
): Promise<Database> {
  return (await openStore(config, options)).database;
}

async function planSessionsFor(databaseUrl: string, leaseUrl: string | undefined, caFile: string | undefined): Promise<SessionPlan> {
  const probed = await probeSessions(databaseUrl, leaseUrl, caFile);
  if ('plan' in probed) return probed.plan;
  throw new ConfigError(probed.problems.map((p) => `${p.variable}: ${p.message}`));
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

import { mkdirSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import type { SQL } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import type postgres from 'postgres';
import { attachPageClient, closePageClients } from './page-client.js';
import { type ClientTls, createPostgresClient } from './postgres-client.js';
import { replaceableClient } from './replaceable-client.js';
import * as changes from './schema/changes.js';
import * as events from './schema/events.js';
import * as feeds from './schema/feeds.js';
import * as outbox from './schema/outbox.js';
import * as storeSchema from './schema/store-schema.js';
import { DEFAULT_TRANSACTION_TIMEOUTS, type TransactionTimeouts, timeoutStartupParameters } from './transaction-timeouts.js';
import { attachStoreNames, storeNames, type StoreNames } from './store-names.js';

/** Every table of the store, as drizzle is handed them (src/db/schema/, one file per concept). */
const schema = { ...storeSchema, ...events, ...feeds, ...changes, ...outbox };

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;

/** Seconds close() lets pending queries finish before the connections are destroyed. */
const CLOSE_TIMEOUT_S = 1;

/** An open store: the drizzle handle plus what the two drivers do differently. */
export interface Database {
  kind: 'postgres' | 'pglite';
  db: Db;
  /** the schema holding every object of this deployment (DATABASE_SCHEMA), qualified names included */
  names: StoreNames;
  /** postgres.js client (kind 'postgres' only; replaced underneath once it lost a connection, see replaceable-client.ts) */
  sql: postgres.Sql | undefined;
  /** PGlite instance (kind 'pglite' only). */
  pglite: PGlite | undefined;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres:// URL; absent means embedded PGlite. */
  url?: string | undefined;
  /** the deployment's schema (DATABASE_SCHEMA); default intake_sync */
  schema?: string | undefined;
  /** PGlite data directory; absent (with no url) means in-memory. */
  dataDir?: string | undefined;
  /** pool size for postgres.js */
  max?: number;
  /**
   * the server ends a session left idle inside a transaction this long (default 30 s): a worker
   * frozen mid-page (SIGSTOP, lost network) must not hold the checkpoint row lock forever
   */
  idleInTransactionTimeoutMs?: number;
  /** called for server notices; postgres.js logs them to console otherwise */
  onnotice?: (notice: postgres.Notice) => void;
  /**
   * the URL goes through a connection pooler (see session-plan.ts): no startup parameters, no
   * named prepared statements, and the idle-in-transaction timeout set inside each page transaction
   */
  pooled?: boolean;
  /** which variable the URL came from (messages) and DATABASE_CA_FILE; default DATABASE_URL, no CA file */
  tls?: ClientTls | undefined;
  /** lock_timeout and statement_timeout of every statement (transaction-timeouts.ts); default DEFAULT_TRANSACTION_TIMEOUTS */
  timeouts?: TransactionTimeouts | undefined;
}

/** Opens Postgres (when a URL is given) or embedded PGlite. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const names = storeNames(options.schema ?? storeSchema.DEFAULT_SCHEMA);
  if (options.url) {
    const idleInTransactionTimeoutMs = options.idleInTransactionTimeoutMs ?? 30_000;
    const pooled = options.pooled === true;
    const timeouts = options.timeouts ?? DEFAULT_TRANSACTION_TIMEOUTS;
    const clientOptions = {
      onnotice: options.onnotice ?? (() => {}),
      // a dead server must surface as an error the worker can pause on, not hang forever
      connect_timeout: 10,
      idle_timeout: 60,
      // no array-type lookup on connect: postgres.js runs it as an internal query whose promise it drops, so a
      // backend terminated during it was an unhandled rejection that ended the process (we use no array types)
      fetch_types: false,
      // behind a pooler: PgBouncer refuses the startup parameter, and a named statement prepared on one
      // server connection is missing (or another client's) on the next; see page-client.ts for the timeout
      ...(pooled ? { prepare: false } : {}),
      connection: {
        application_name: applicationName(options.url),
        // directly connected, the session carries them; behind a pooler the page transaction sets them itself
        ...(pooled ? {} : { idle_in_transaction_session_timeout: idleInTransactionTimeoutMs, ...timeoutStartupParameters(timeouts) }),
      },
    };
    const tls = options.tls ?? { variable: 'DATABASE_URL' };
    const url = options.url;
    // a pool that lost a connection is replaced (replaceable-client.ts); drizzle() configures each
    // client's value serializers, the replacements' too, so every client sends the same parameters
    const pool = replaceableClient(() => {
      const poolClient = createPostgresClient(url, { ...clientOptions, max: options.max ?? DAEMON_POOL_CONNECTIONS }, tls);
      drizzlePostgres(poolClient);
      return poolClient;
    });
    const client = pool.sql;
    const db = drizzlePostgres(client, { schema }) as unknown as Db;
    // page transactions run on a connection of their own (see page-client.ts), configured the same way
    attachPageClient(
      db,
      () => {
        const pageClient = createPostgresClient(url, { ...clientOptions, max: 1 }, tls);
        drizzlePostgres(pageClient);
        return pageClient;
      },
      pooled ? { prepare: false, idleInTransactionTimeoutMs, timeouts } : { prepare: true },
    );
    // by close time the worker has stopped (its page committed or rolled back): a query still
    // pending is a stranded one, and waiting for it would only eat the shutdown grace period
    const close = async () => {
      await Promise.all([pool.end(CLOSE_TIMEOUT_S), closePageClients(db, CLOSE_TIMEOUT_S)]);
    };
    attachStoreNames(db, names);
    return { kind: 'postgres', db, names, sql: client, pglite: undefined, close };
  }
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  // loaded only here: a production run on Postgres never loads PGlite (its modules cost resident memory for nothing)
  const [{ PGlite }, { drizzle: drizzlePglite }] = await Promise.all([import('@electric-sql/pglite'), import('drizzle-orm/pglite')]);
  const pglite = options.dataDir ? new PGlite(options.dataDir) : new PGlite();
  await pglite.waitReady;
  const db = drizzlePglite(pglite, { schema }) as unknown as Db;
  attachStoreNames(db, names);
  return { kind: 'pglite', db, names, sql: undefined, pglite, close: () => pglite.close() };
}

/**
 * How this process shows in pg_stat_activity (through PgBouncer too, which passes application_name on):
 * the operator's own `application_name` from the URL when it has one (the startup option would
 * override it), else `intake-sync[pid]`.
 */
export function applicationName(url?: string): string {
  const given = url && URL.canParse(url) ? new URL(url).searchParams.get('application_name') : null;
  return given || `intake-sync[${process.pid}]`;
}

/** The daemon's pool size (its page connection and lease session come on top: `doctor` adds them up). */
export const DAEMON_POOL_CONNECTIONS = 4;

/** Runs a raw statement and returns its rows, whichever driver is underneath. */
export async function queryRows<T extends Record<string, unknown>>(db: Pick<Db, 'execute'>, query: SQL): Promise<T[]> {
  const result = (await db.execute(query)) as unknown;
  // postgres.js returns the row array itself; PGlite returns { rows }
  if (Array.isArray(result)) return result as T[];
  return ((result as { rows?: T[] }).rows ?? []) as T[];
}

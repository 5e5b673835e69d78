import { randomBytes } from 'node:crypto';
import { databasePrefix } from './test-run.js';
import postgres from 'postgres';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { registerFeeds } from '../../src/db/feed-registry.js';
import { runMigrations } from '../../src/db/migrate.js';

/** The server the test machines run; override with TEST_DATABASE_URL. */
export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let reachable: Promise<boolean> | undefined;

/** True when a real PostgreSQL answers at ADMIN_URL (checked once per process). */
export function postgresReachable(): Promise<boolean> {
  reachable ??= (async () => {
    const sql = postgres(ADMIN_URL, { max: 1, connect_timeout: 2, onnotice: () => {} });
    try {
      await sql`select 1`;
      return true;
    } catch {
      return false;
    } finally {
      await sql.end({ timeout: 1 }).catch(() => {});
    }
  })();
  return reachable;
}

/** Reason string for tests that need a real server (locks, several processes, kill -9). */
export const NEEDS_POSTGRES =
  'needs a real PostgreSQL at 127.0.0.1:5432 (true concurrency: locks, several processes); skipped on embedded PGlite';

export interface TestDatabase {
  /** postgres:// URL of a fresh, migrated database (undefined on the PGlite fallback). */
  url: string | undefined;
  database: Database;
  /** Closes the connection and drops the database. */
  drop(): Promise<void>;
}

/**
 * A fresh migrated database for one test file: its own Postgres database on the
 * real server, or an in-memory PGlite when no server is reachable. Its feed `default` is
 * registered, as `intake-sync migrate` registers the configured feed.
 */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  if (!(await postgresReachable())) {
    const database = await openDatabase({});
    await runMigrations(database);
    await registerFeeds(database.db, ['default'], null);
    return { url: undefined, database, drop: () => database.close() };
  }
  const name = testDatabaseName(label);
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString() });
  await runMigrations(database);
  // as `intake-sync migrate` does for the configured feed (FEED_NAME, `default`): the SQL API accepts it
  await registerFeeds(database.db, ['default'], null);
  return {
    url: url.toString(),
    database,
    async drop() {
      await database.close().catch(() => {});
      // KEEP_TEST_DB=1 leaves the database behind for inspection after a failure
      if (!process.env.KEEP_TEST_DB) await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end({ timeout: 5 });
    },
  };
}

export interface EmptyDatabase {
  /** postgres:// URL of a fresh database with nothing of ours in it */
  url: string;
  /** an admin connection to it (superuser): for the vendor's own objects and inspection */
  sql: postgres.Sql;
  drop(): Promise<void>;
}

/** A fresh, unmigrated database on the real server (callers skip on PGlite: pg_dump and roles need one). */
export async function createEmptyDatabase(label: string): Promise<EmptyDatabase> {
  const name = testDatabaseName(label);
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {}, fetch_types: false });
  return {
    url: url.toString(),
    sql,
    async drop() {
      await sql.end({ timeout: 1 }).catch(() => {});
      if (!process.env.KEEP_TEST_DB) await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end({ timeout: 5 });
    },
  };
}

/** The same database URL, connecting as another role (trust auth on the test server). */
export function urlAs(databaseUrl: string, role: string): string {
  const url = new URL(databaseUrl);
  url.username = role;
  return url.toString();
}

/** A database name of this run (its prefix), the label's first 30 characters and a random suffix. */
function testDatabaseName(label: string): string {
  const readable = label
    .replace(/[^a-z0-9]/gi, '_')
    .toLowerCase()
    .slice(0, 30);
  return `${databasePrefix()}${readable}_${randomBytes(4).toString('hex')}`;
}

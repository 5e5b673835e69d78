import postgres from 'postgres';
import { openDatabase, type Database } from '../src/db/connection.js';
import { runMigrations } from '../src/db/migrate.js';

/** The server the bench runs on; DATABASE_URL overrides it (any database on the server: it is only the admin entry). */
export const DEFAULT_SERVER_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

// databases this run created and has not dropped yet: a signal drops them on the way out
const undropped = new Map<string, string>();

/** Drops every database this run created and still holds (interrupted runs); errors are ignored. */
export async function dropUndroppedDatabases(): Promise<void> {
  for (const [name, serverUrl] of undropped) {
    const dropper = postgres(serverUrl, { max: 1, onnotice: () => {} });
    await dropper.unsafe(`drop database if exists "${name}" with (force)`).catch(() => {});
    await dropper.end({ timeout: 5 }).catch(() => {});
  }
  undropped.clear();
}

/** A migrated database created for this run. */
export interface BenchDatabase {
  name: string;
  url: string;
  database: Database;
  /** raw postgres.js client on the same database (set-based setup, the ceiling and the naive loop) */
  sql: postgres.Sql;
  /** Closes the connections and keeps the database (a template for copies): close() still drops it. */
  disconnect(): Promise<void>;
  /** Closes the connections; drops the database unless `keep`. */
  close(keep: boolean): Promise<void>;
}

/**
 * Creates and migrates a fresh database `name` on the server of `serverUrl`; with `template`, a copy of that
 * (disconnected) database, file by file: no WAL for its contents, so the copy's drain does not share the disk
 * with a flood of it.
 */
export async function createBenchDatabase(serverUrl: string, name: string, options: { template?: string } = {}): Promise<BenchDatabase> {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    const from = options.template ? ` template "${options.template}" strategy file_copy` : '';
    await admin.unsafe(`create database "${name}"${from}`);
    undropped.set(name, serverUrl);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString() });
  await runMigrations(database);
  const sql = postgres(url.toString(), { max: 2, onnotice: () => {} });
  const disconnect = async () => {
    await database.close().catch(() => {});
    await sql.end({ timeout: 5 }).catch(() => {});
  };
  return {
    name,
    url: url.toString(),
    database,
    sql,
    disconnect,
    async close(keep) {
      await disconnect();
      undropped.delete(name);
      if (keep) return;
      const dropper = postgres(serverUrl, { max: 1, onnotice: () => {} });
      try {
        await dropper.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await dropper.end({ timeout: 5 });
      }
    },
  };
}

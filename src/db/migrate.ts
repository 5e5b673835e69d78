import { sql } from 'drizzle-orm';
import { queryRows, type Database } from './connection.js';
import { MigrationError } from './errors/migration-error.js';
import { SchemaVersionError } from './errors/schema-version-error.js';
import { forSchema, readMigrationFiles, type MigrationFile } from './migration-files.js';
import { assertOwnedSchema, revokePublicCreate } from './schema-ownership.js';
import { readSqlApiFiles, SQL_API_LEDGER_TABLE, type SqlApiFile } from './sql-api-files.js';
import type { MigrationPlan } from './migration-summary.js';

export { MIGRATIONS_FOLDER } from './migration-files.js';

/** The ledger, inside the deployment's schema: drizzle's shape, never drizzle's shared default. */
export const LEDGER_TABLE = '__drizzle_migrations';

/**
 * First key of the advisory lock serialising the migrators of a schema that has no ledger yet (the
 * second is hashtext(schema)). Once the ledger exists they lock the ledger table instead, which needs
 * a privilege (issue 25: any login may hold any advisory lock), and a start that finds nothing to
 * apply takes no lock at all, so no login can stall a daemon's start.
 */
const MIGRATION_LOCK_NAMESPACE = 7_305;

type Tx = Parameters<Parameters<Database['db']['transaction']>[0]>[0];

interface LedgerRow extends Record<string, unknown> {
  hash: string;
  tag: string | null;
}

/**
 * Whether the table exists, read from pg_class with this statement's snapshot: to_regclass answers
 * from the backend's name cache, which keeps a "no such table" from before another migrator's commit
 * until the backend next processes invalidations (taking a relation lock does; waiting for the
 * advisory migration lock does not), and the migrator would then apply everything again.
 */
function tableExists(schema: string, table: string) {
  return sql`exists (select 1 from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relname = ${table})`;
}

async function readLedger(tx: Tx, schema: string): Promise<LedgerRow[] | null> {
  const [found] = await queryRows<{ present: boolean }>(tx, sql`select ${tableExists(schema, LEDGER_TABLE)} as present`);
  if (!found?.present) return null;
  return queryRows<LedgerRow>(tx, sql.raw(`select hash, tag from "${schema}"."${LEDGER_TABLE}" order by id`));
}

/** Migrations the database has and this code does not know: it was migrated by a newer version. */
function unknownMigrations(ledger: readonly LedgerRow[], files: readonly MigrationFile[]): LedgerRow[] {
  const known = new Set(files.map((f) => f.hash));
  return ledger.filter((row) => !known.has(row.hash));
}

function newerSchemaError(schema: string, unknown: readonly LedgerRow[]): SchemaVersionError {
  const tags = unknown.map((row) => row.tag ?? row.hash.slice(0, 12)).join(', ');
  return new SchemaVersionError(
    `the database schema "${schema}" is newer than this intake-sync: it has migrations this version does not know (${tags}). ` +
      'Refusing to run: deploy the version that migrated it, or a newer one.',
  );
}

export interface MigrationOptions {
  files?: readonly MigrationFile[];
  /**
   * the SQL API's files, applied after the versioned migrations; default: sql/api/manifest.txt's
   * (a test that migrates only the first few `files` passes none: the API's views need later tables)
   */
  api?: readonly SqlApiFile[];
  /**
   * how each statement of a migration is rewritten before it runs (adopting a public-schema
   * install re-runs the baseline with IF NOT EXISTS); the default runs it as written
   */
  rewrite?: (statement: string, migration: MigrationFile) => string;
  /** runs first inside the migration transaction, under the lock (adoption moves tables here) */
  before?: (tx: Tx) => Promise<void>;
  /**
   * check ownership (assertOwnedSchema) and revoke CREATE from PUBLIC even when nothing is pending:
   * `intake-sync migrate` runs as the owner; `run` (MIGRATE_ON_START, maybe as the runtime role) checks
   * only when it has migrations to apply
   */
  verifyOwnership?: boolean;
}

async function readApiLedger(tx: Tx, schema: string): Promise<Map<string, string>> {
  const name = `"${schema}"."${SQL_API_LEDGER_TABLE}"`;
  const [found] = await queryRows<{ present: boolean; readable: boolean }>(
    tx,
    sql`select ${tableExists(schema, SQL_API_LEDGER_TABLE)} as present,
          ${tableExists(schema, SQL_API_LEDGER_TABLE)} and has_table_privilege(${name}, 'SELECT') as readable`,
  );
  if (!found?.present) return new Map();
  if (!found.readable) {
    throw new SchemaVersionError(
      `this role may not read ${schema}.${SQL_API_LEDGER_TABLE} (which SQL API files are current): grant it SELECT, ` +
        '`intake-sync grants --role runtime --to ROLE` prints the statements (docs/security.md)',
    );
  }
  const rows = await queryRows<{ path: string; hash: string }>(tx, sql.raw(`select path, hash from "${schema}"."${SQL_API_LEDGER_TABLE}"`));
  return new Map(rows.map((row) => [row.path, row.hash]));
}

/** The SQL API's files whose content the ledger does not record (new or edited since last applied), in manifest order. */
function changedApiFiles(files: readonly SqlApiFile[], ledger: ReadonlyMap<string, string>): SqlApiFile[] {
  return files.filter((f) => ledger.get(f.path) !== f.hash);
}

async function applyApiFiles(tx: Tx, schema: string, files: readonly SqlApiFile[]): Promise<void> {
  const ledger = `"${schema}"."${SQL_API_LEDGER_TABLE}"`;
  try {
    await tx.execute(
      sql.raw(`create table if not exists ${ledger} (
        path text primary key, hash text not null, applied_at timestamptz not null default now())`),
    );
  } catch (error) {
    throw new MigrationError(`(${SQL_API_LEDGER_TABLE})`, schema, error);
  }
  for (const file of files) {
    try {
      for (const statement of file.statements) await tx.execute(sql.raw(forSchema(statement, schema)));
      await tx.execute(
        sql`insert into ${sql.raw(ledger)} (path, hash) values (${file.path}, ${file.hash})
            on conflict (path) do update set hash = excluded.hash, applied_at = now()`,
      );
    } catch (error) {
      throw new MigrationError(`sql/api/${file.path}`, schema, error);
    }
  }
}

/**
 * Applies every pending migration to the deployment's schema, then every file of the SQL API
 * (sql/api/manifest.txt) whose content changed since it was last applied (a repeatable step: each
 * file is a CREATE OR REPLACE), in one transaction, serialised across processes by a transaction
 * advisory lock. Does nothing (and needs no DDL privilege) when the schema is current; refuses when
 * it is newer than the code. Returns the tags applied, then the SQL API files applied (sql/api/...).
 */
export async function runMigrations(database: Database, options: MigrationOptions = {}): Promise<string[]> {
  const files = options.files ?? readMigrationFiles();
  const api = options.api ?? readSqlApiFiles();
  const schema = database.names.schema;
  // The no-op check runs in a transaction of its own: a transaction that looked the ledger up before
  // waiting for the migration lock keeps the catalog's "no such table" from before another migrator's
  // commit, and would apply every migration again over that migrator's tables.
  const current = await database.db.transaction(async (tx) => {
    const seen = await readLedger(tx, schema);
    const noop =
      seen !== null &&
      !options.before &&
      !options.verifyOwnership &&
      unknownMigrations(seen, files).length === 0 &&
      seen.length === files.length &&
      changedApiFiles(api, await readApiLedger(tx, schema)).length === 0;
    return { noop, ledgerExists: seen !== null };
  });
  // nothing to apply and nothing to verify: no lock (a migrator that commits meanwhile leaves a newer schema, checked at start)
  if (current.noop) return [];
  return database.db.transaction(async (tx) => {
    // a migration may wait for another migrator and rewrite large tables: the daemon's timeouts are not for it
    await tx.execute(sql.raw('set local lock_timeout = 0'));
    await tx.execute(sql.raw('set local statement_timeout = 0'));
    // the lock first, before this transaction reads anything of the schema
    if (current.ledgerExists) await tx.execute(sql.raw(`lock table "${schema}"."${LEDGER_TABLE}" in exclusive mode`));
    else await tx.execute(sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_NAMESPACE}::int, hashtext(${schema}::text))`);
    if (options.before) await options.before(tx);
    const ledger = (await readLedger(tx, schema)) ?? [];
    const unknown = unknownMigrations(ledger, files);
    if (unknown.length > 0) throw newerSchemaError(schema, unknown);
    const applied = new Set(ledger.map((row) => row.hash));
    const pending = files.filter((f) => !applied.has(f.hash));
    const apiPending = changedApiFiles(api, await readApiLedger(tx, schema));
    if (pending.length === 0 && apiPending.length === 0 && !options.verifyOwnership) return [];
    // before any DDL: a schema another role created (or planted objects in) is never adopted
    await assertOwnedSchema(tx, schema);
    if (pending.length === 0 && apiPending.length === 0) {
      await revokePublicCreate(tx, schema);
      return [];
    }
    if (ledger.length === 0) {
      try {
        await tx.execute(sql.raw(`create schema if not exists "${schema}"`));
        await tx.execute(
          sql.raw(`create table if not exists "${schema}"."${LEDGER_TABLE}" (
            id serial primary key, hash text not null, created_at bigint, tag text, applied_at timestamptz not null default now())`),
        );
      } catch (error) {
        throw new MigrationError('(schema and ledger)', schema, error);
      }
    }
    await revokePublicCreate(tx, schema);
    for (const migration of pending) {
      try {
        for (const statement of migration.statements) {
          const text = forSchema(options.rewrite ? options.rewrite(statement, migration) : statement, schema);
          await tx.execute(sql.raw(text));
        }
        await tx.execute(
          sql`insert into ${sql.raw(`"${schema}"."${LEDGER_TABLE}"`)} (hash, created_at, tag)
              values (${migration.hash}, ${migration.createdAt}::bigint, ${migration.tag})`,
        );
      } catch (error) {
        throw new MigrationError(migration.tag, schema, error);
      }
    }
    if (apiPending.length > 0) await applyApiFiles(tx, schema, apiPending);
    return [...pending.map((f) => f.tag), ...apiPending.map((f) => `sql/api/${f.path}`)];
  });
}

/**
 * What runMigrations would apply now, read without a lock or a change (`migrate --dry-run`): the
 * pending migrations, the SQL API files changed since last applied, and the levels before and after.
 * Refuses a schema newer than the code, as runMigrations does.
 */
export async function pendingMigrations(
  database: Database,
  files: readonly MigrationFile[] = readMigrationFiles(),
  api: readonly SqlApiFile[] = readSqlApiFiles(),
): Promise<MigrationPlan> {
  const schema = database.names.schema;
  return database.db.transaction(async (tx) => {
    const ledger = (await readLedger(tx, schema)) ?? [];
    const unknown = unknownMigrations(ledger, files);
    if (unknown.length > 0) throw newerSchemaError(schema, unknown);
    const applied = new Set(ledger.map((row) => row.hash));
    const pending = files.filter((f) => !applied.has(f.hash));
    const apiPending = changedApiFiles(api, await readApiLedger(tx, schema));
    const last = [...files].reverse().find((f) => applied.has(f.hash));
    return {
      schema,
      from: last?.tag ?? null,
      to: files.at(-1)?.tag ?? null,
      migrations: pending.map((f) => f.tag),
      apiFiles: apiPending.map((f) => f.path),
    };
  });
}

/**
 * For `run` with MIGRATE_ON_START=false: the schema must be exactly what this code expects,
 * neither behind it (run `migrate` first) nor ahead of it (a rolled-back deploy), and every SQL
 * API file applied as this build ships it.
 */
export async function assertSchemaCurrent(
  database: Database,
  files: readonly MigrationFile[] = readMigrationFiles(),
  api: readonly SqlApiFile[] = readSqlApiFiles(),
): Promise<void> {
  const schema = database.names.schema;
  await database.db.transaction(async (tx) => {
    const ledger = await readLedger(tx, schema);
    if (!ledger) {
      throw new SchemaVersionError(
        `the database has no intake-sync schema "${schema}" yet: run \`intake-sync migrate\` as the owner role (MIGRATE_ON_START=false skips it)`,
      );
    }
    const unknown = unknownMigrations(ledger, files);
    if (unknown.length > 0) throw newerSchemaError(schema, unknown);
    const applied = new Set(ledger.map((row) => row.hash));
    const pending = files.filter((f) => !applied.has(f.hash)).map((f) => f.tag);
    if (pending.length > 0) {
      throw new SchemaVersionError(
        `the database schema "${schema}" is behind this intake-sync (pending: ${pending.join(', ')}): ` +
          'run `intake-sync migrate` as the owner role first (MIGRATE_ON_START=false skips it)',
      );
    }
    const changed = changedApiFiles(api, await readApiLedger(tx, schema)).map((f) => f.path);
    if (changed.length > 0) {
      throw new SchemaVersionError(
        `the SQL API of schema "${schema}" is not this intake-sync's (functions and views to apply: ${changed.join(', ')}): ` +
          'run `intake-sync migrate` as the owner role first (MIGRATE_ON_START=false skips it)',
      );
    }
  });
}

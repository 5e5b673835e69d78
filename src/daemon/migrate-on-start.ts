import { sql } from 'drizzle-orm';
import { queryRows, type Database } from '../db/connection.js';
import { findLegacyPublicInstall } from '../db/legacy-public-install.js';
import { assertSchemaCurrent, LEDGER_TABLE, runMigrations } from '../db/migrate.js';
import { assertOwnedSchema } from '../db/schema-ownership.js';
import { requireRuntimeGrants } from './runtime-grants.js';

/**
 * Brings the store's schema to this code's version before anything reads it: applies pending
 * migrations (serialised across processes inside runMigrations), or, with migrations off, only
 * checks that the schema is exactly current; then checks the role holds the runtime grants. Returns what it applied (runMigrations). Refuses to start a fresh schema beside an
 * unadopted 0.1 install in public: the worker would replay the feed into empty tables and lose
 * the prescriptions registered there.
 */
export async function migrateOnStart(
  database: Database,
  options: { migrate: boolean; verifyOwnership?: boolean },
): Promise<readonly string[]> {
  if (!options.migrate) {
    // a schema this role cannot use looks like no schema at all: name the grants instead
    if (await schemaExists(database)) await requireRuntimeGrants(database);
    await assertSchemaCurrent(database);
    return [];
  }
  const schema = database.names.schema;
  // `migrate`: refuse a schema of another role before reading anything in it (its ledger included)
  if (options.verifyOwnership) await assertOwnedSchema(database.db, schema);
  // the schema's own ledger: once it exists, the legacy question is settled
  const [present] = await queryRows<{ present: boolean }>(
    database.db,
    sql`select to_regclass(${`"${schema}"."${LEDGER_TABLE}"`}) is not null as present`,
  );
  if (!present?.present && (await findLegacyPublicInstall(database.db))) {
    throw new Error(
      `found an intake-sync 0.1 install in schema public: run \`intake-sync migrate --adopt-public\` once (as the owner role) to move it into "${schema}" with every row`,
    );
  }
  const applied = await runMigrations(database, { verifyOwnership: options.verifyOwnership === true });
  await requireRuntimeGrants(database);
  return applied;
}

async function schemaExists(database: Database): Promise<boolean> {
  const [row] = await queryRows<{ present: boolean }>(
    database.db,
    sql`select exists (select 1 from pg_namespace where nspname = ${database.names.schema}) as present`,
  );
  return row?.present === true;
}

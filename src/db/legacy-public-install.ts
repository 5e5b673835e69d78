import { sql } from 'drizzle-orm';
import { queryRows, type Database } from './connection.js';
import { runMigrations } from './migrate.js';
import { readMigrationFiles, type MigrationFile } from './migration-files.js';

/**
 * Versions up to 0.1 created their tables in `public` and recorded their migrations in drizzle's
 * shared ledger `drizzle.__drizzle_migrations`. These are the hashes of those three migrations:
 * a ledger holding them is that install's, whatever else (a vendor app's rows) it holds.
 */
export const LEGACY_MIGRATION_HASHES = [
  'ebc1656b8e18517059b6ee67620c9d436ff74804401ab03ae180c7cb2ce73848', // 0000_init
  'f79266616dc34bf4e025dd20fc6e63237528c60127f75a0b3e1a6ac20b99a23f', // 0001_prescriptions_fillfactor
  '4f3d6de6f43bf51593be5c793e3eec3477ce5cc1efdcb9947febf4a381015223', // 0002_events_raw_json
] as const;

/** The legacy tables, moved as they are (rows, indexes, constraints and owned sequences go with them). */
export const LEGACY_TABLES = ['prescriptions', 'events', 'feed_checkpoints', 'checkpoint_resets', 'quarantine'] as const;

/** The migration whose tables adoption moves instead of creating. */
const BASELINE_TAG = '0000_intake_sync_schema';

export interface LegacyInstall {
  /** how many of the three legacy migrations the shared ledger records */
  migrations: number;
}

type Executor = Pick<Database['db'], 'execute'>;

/** An intake-sync 0.1 install in `public`, or null. Reads only; safe to call on every start. */
export async function findLegacyPublicInstall(db: Executor): Promise<LegacyInstall | null> {
  const [ledger] = await queryRows<{ present: boolean }>(
    db,
    sql`select to_regclass('drizzle.__drizzle_migrations') is not null and to_regclass('public.feed_checkpoints') is not null as present`,
  );
  if (!ledger?.present) return null;
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`select count(distinct hash)::int as n from drizzle.__drizzle_migrations
        where hash in (${sql.join(
          LEGACY_MIGRATION_HASHES.map((h) => sql`${h}`),
          sql`, `,
        )})`,
  );
  return row && row.n > 0 ? { migrations: row.n } : null;
}

/**
 * The baseline re-run after the move: the moved tables and their indexes exist already (with
 * the names the baseline gives them), the tables 0.1 did not have are created.
 */
export function ifNotExists(statement: string, migration: MigrationFile): string {
  if (migration.tag !== BASELINE_TAG) return statement;
  return statement
    .replace(/^(\s*)CREATE TABLE "/m, '$1CREATE TABLE IF NOT EXISTS "')
    .replace(/^(\s*)CREATE (UNIQUE )?INDEX "/m, '$1CREATE $2INDEX IF NOT EXISTS "');
}

/**
 * Revokes every privilege other roles (PUBLIC included) hold on the relations just moved into
 * `schema` (the legacy tables and their sequences): grants given in 0.1's `public` would otherwise
 * reach the tables behind the SQL API, past its validation, audit trail and per-feed access.
 * Returns what was revoked, as `SELECT, UPDATE on prescriptions from vendor_app`.
 */
async function revokeLegacyGrants(tx: Executor, schema: string): Promise<string[]> {
  const grants = await queryRows<{ relname: string; relkind: string; grantee: string; privileges: string }>(
    tx,
    sql`select c.relname, c.relkind::text as relkind,
          case when a.grantee = 0 then 'PUBLIC' else pg_get_userbyid(a.grantee) end as grantee,
          string_agg(a.privilege_type, ', ' order by a.privilege_type) as privileges
        from pg_class c join pg_namespace n on n.oid = c.relnamespace, aclexplode(c.relacl) a
        where n.nspname = ${schema} and c.relkind in ('r', 'S') and a.grantee <> c.relowner
        group by 1, 2, 3 order by 1, 3`,
  );
  for (const g of grants) {
    const target = `${g.relkind === 'S' ? 'SEQUENCE' : 'TABLE'} "${schema}"."${g.relname.replaceAll('"', '""')}"`;
    const grantee = g.grantee === 'PUBLIC' ? 'PUBLIC' : `"${g.grantee.replaceAll('"', '""')}"`;
    await tx.execute(sql.raw(`revoke all on ${target} from ${grantee}`));
  }
  return grants.map((g) => `${g.privileges} on ${g.relname} from ${g.grantee}`);
}

/**
 * Moves a 0.1 install from `public` into the deployment's schema, in one transaction: the five
 * tables with every row, their grants to other roles revoked (revokeLegacyGrants), then the
 * remaining migrations, then our rows leave drizzle's shared ledger (the vendor's rows there stay).
 * Refuses when the schema already holds an install.
 */
export async function adoptLegacyPublicInstall(database: Database): Promise<{ moved: string[]; applied: string[]; revoked: string[] }> {
  const schema = database.names.schema;
  const legacy = await findLegacyPublicInstall(database.db);
  if (!legacy) throw new Error('no intake-sync install found in public (drizzle.__drizzle_migrations holds none of its migrations)');
  if (legacy.migrations !== LEGACY_MIGRATION_HASHES.length) {
    throw new Error(
      `the install in public has ${legacy.migrations} of its ${LEGACY_MIGRATION_HASHES.length} migrations: run \`intake-sync migrate\` with the version that made it first`,
    );
  }
  const moved: string[] = [];
  let revoked: string[] = [];
  const applied = await runMigrations(database, {
    rewrite: ifNotExists,
    before: async (tx) => {
      const [existing] = await queryRows<{ present: boolean }>(
        tx,
        sql`select to_regclass(${`"${schema}"."feed_checkpoints"`}) is not null as present`,
      );
      if (existing?.present) throw new Error(`schema "${schema}" already holds an intake-sync install: nothing to adopt into it`);
      await tx.execute(sql.raw(`create schema if not exists "${schema}"`));
      for (const table of LEGACY_TABLES) {
        await tx.execute(sql.raw(`alter table public."${table}" set schema "${schema}"`));
        moved.push(table);
      }
      revoked = await revokeLegacyGrants(tx, schema);
      await tx.execute(
        sql`delete from drizzle.__drizzle_migrations where hash in (${sql.join(
          LEGACY_MIGRATION_HASHES.map((h) => sql`${h}`),
          sql`, `,
        )})`,
      );
    },
    files: readMigrationFiles(),
  });
  return { moved, applied, revoked };
}

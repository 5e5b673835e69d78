import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { MigrationError } from '../../src/db/errors/migration-error.js';
import { adoptLegacyPublicInstall } from '../../src/db/legacy-public-install.js';
import { runMigrations } from '../../src/db/migrate.js';
import { readMigrationFiles } from '../../src/db/migration-files.js';
import { readSqlApiFiles, sqlApiFile, type SqlApiFile } from '../../src/db/sql-api-files.js';
import { catalogSnapshot } from '../support/catalog-snapshot.js';
import { createEmptyDatabase, NEEDS_POSTGRES, postgresReachable, type EmptyDatabase } from '../support/db.js';
import { installLegacy } from '../support/db/legacy-install.js';

// The SQL API's files (sql/api) are applied by migrate after the versioned migrations, each only
// when its content changed. Whatever level a database starts from, it ends with the same schema,
// and a file that fails takes the whole migrate with it.

const reachable = await postgresReachable();
const files = readMigrationFiles();
const api = readSqlApiFiles();
/** The schema level 0.2.0 shipped: its migrations end with 0014, and it had no sql/api ledger. */
const LEVEL_0_2 = files.slice(0, files.findIndex((f) => f.tag === '0014_triage') + 1);
// three full migrations and three dumps: about 15 s alone, several times that on a loaded 2-core machine
const SLOW = { timeout: 180_000 };

/**
 * pg_dump --schema-only of the deployment's schema, owners and grants included; only the per-run
 * \restrict key left out. A server newer than the machine's pg_dump (the matrix's 16-18 beside
 * Debian's 15) is refused by pg_dump, so its schema is read from the catalogs instead.
 */
async function dumpSchema(url: string): Promise<string> {
  if (!(await pgDumpReads(url))) return catalogSnapshot(url, [], { schema: 'intake_sync', definitionsOnly: true });
  const { stdout } = await promisify(execFile)(
    process.env.PG_DUMP ?? 'pg_dump',
    ['--schema-only', '--schema=intake_sync', '--dbname', url],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return stdout
    .split('\n')
    .filter((line) => !/^\\(un)?restrict /.test(line))
    .join('\n');
}

/** Whether the machine's pg_dump accepts this server (it refuses a newer major). */
async function pgDumpReads(url: string): Promise<boolean> {
  const { stdout } = await promisify(execFile)(process.env.PG_DUMP ?? 'pg_dump', ['--version']);
  const dumpMajor = Number(/(\d+)(?:\.\d+)?/.exec(stdout)?.[1]);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ n: number }[]>`select current_setting('server_version_num')::int / 10000 as n`;
    return (row?.n ?? Number.POSITIVE_INFINITY) <= dumpMajor;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

async function migrated(empty: EmptyDatabase, run: (database: Database) => Promise<unknown>): Promise<void> {
  const database = await openDatabase({ url: empty.url, onnotice: () => {} });
  try {
    await run(database);
  } finally {
    await database.close();
  }
}

/** One file of the manifest with other text (the same path, so a new hash). */
function edited(path: string, edit: (text: string) => string): SqlApiFile[] {
  return api.map((f) => (f.path === path ? sqlApiFile(f.path, edit(f.statements.join(''))) : f));
}

describe.skipIf(!reachable)(`the SQL API applied by migrate (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  const databases: EmptyDatabase[] = [];
  const empty = async (label: string) => {
    const db = await createEmptyDatabase(label);
    databases.push(db);
    return db;
  };
  let fresh: EmptyDatabase;
  beforeAll(async () => {
    fresh = await empty('sqlapi_fresh');
    await migrated(fresh, (d) => runMigrations(d));
  }, SLOW.timeout);
  afterAll(async () => {
    for (const db of databases) await db.drop();
  }, SLOW.timeout);

  it('a fresh install, an upgrade from 0.2 and an upgrade from 0.1 end byte-identical in pg_dump --schema-only', SLOW, async () => {
    const from02 = await empty('sqlapi_from_02');
    await migrated(from02, async (d) => {
      expect(await runMigrations(d, { files: LEVEL_0_2, api: [] })).toEqual(LEVEL_0_2.map((f) => f.tag));
      expect(await runMigrations(d)).toEqual([...files.slice(LEVEL_0_2.length).map((f) => f.tag), ...api.map((f) => `sql/api/${f.path}`)]);
    });
    const from01 = await empty('sqlapi_from_01');
    await installLegacy(from01);
    await migrated(from01, async (d) => {
      const adopted = await adoptLegacyPublicInstall(d);
      expect(adopted.applied.filter((a) => a.startsWith('sql/api/'))).toHaveLength(api.length);
    });
    const expected = await dumpSchema(fresh.url);
    expect(expected).toMatch(/CREATE (OR REPLACE )?FUNCTION intake_sync\.register_prescription\(/);
    expect(await dumpSchema(from02.url)).toBe(expected);
    expect(await dumpSchema(from01.url)).toBe(expected);
  });

  it('an edited file is re-applied, alone; an unchanged one is not', SLOW, async () => {
    const path = 'registration/identity_key.sql';
    const comment = () =>
      fresh.sql<{ c: string }[]>`select obj_description('intake_sync.identity_key(jsonb)'::regprocedure, 'pg_proc') as c`.then(
        (r) => r[0]?.c,
      );
    const ledger = () =>
      fresh.sql<
        { path: string; hash: string; applied_at: Date }[]
      >`select path, hash, applied_at from intake_sync.__sql_api_applied order by path`;
    const before = await ledger();
    expect(before.map((r) => r.path).sort()).toEqual(api.map((f) => f.path).sort());
    const changed = edited(path, (text) => text.replace("as the worker computes it (docs/sql-api/register.md)'", "edited by the test'"));
    await migrated(fresh, async (d) => {
      expect(await runMigrations(d)).toEqual([]);
      expect(await runMigrations(d, { api: changed })).toEqual([`sql/api/${path}`]);
      expect(await runMigrations(d, { api: changed })).toEqual([]);
    });
    expect(await comment()).toBe('the composite match key of a PrescriptionIdentity, edited by the test');
    const after = await ledger();
    const newHash = changed.find((f) => f.path === path)?.hash;
    expect(after.filter((r) => r.path !== path)).toEqual(before.filter((r) => r.path !== path));
    expect(after.find((r) => r.path === path)?.hash).toBe(newHash);
    // and the committed file brings it back
    await migrated(fresh, async (d) => expect(await runMigrations(d)).toEqual([`sql/api/${path}`]));
    expect(await comment()).toBe('the composite match key of a PrescriptionIdentity, as the worker computes it (docs/sql-api/register.md)');
  });

  it('a broken file rolls back the whole migrate: the pending migration, the files before it, the ledgers', SLOW, async () => {
    const db = await empty('sqlapi_broken');
    const last = files.at(-1);
    await migrated(db, (d) => runMigrations(d, { files: files.slice(0, -1), api: [] }));
    const good = edited('registration/identity_key.sql', (text) => text.replace('as the worker computes it', 'changed'));
    const broken = edited('triage/dismiss_quarantined.sql', (text) => text.replace('LANGUAGE plpgsql', 'LANGUAGE no_such_language'));
    const list = good.map((f) => (f.path === 'triage/dismiss_quarantined.sql' ? (broken.find((b) => b.path === f.path) as SqlApiFile) : f));
    let error: unknown;
    await migrated(db, async (d) => {
      error = await runMigrations(d, { api: list }).catch((e: unknown) => e);
    });
    expect(error).toBeInstanceOf(MigrationError);
    expect((error as Error).message).toContain('sql/api/triage/dismiss_quarantined.sql');
    expect((error as Error).message).toContain('no_such_language');
    const tags = await db.sql<{ tag: string }[]>`select tag from intake_sync.__drizzle_migrations order by id`;
    expect(tags.map((r) => r.tag)).toEqual(files.slice(0, -1).map((f) => f.tag));
    expect(tags.map((r) => r.tag)).not.toContain(last?.tag);
    const [ledger] = await db.sql<{ present: boolean }[]>`select to_regclass('intake_sync.__sql_api_applied') is not null as present`;
    expect(ledger?.present).toBe(false);
    const [comment] = await db.sql<
      { c: string }[]
    >`select obj_description('intake_sync.identity_key(jsonb)'::regprocedure, 'pg_proc') as c`;
    expect(comment?.c).toContain('as the worker computes it');
  });
});

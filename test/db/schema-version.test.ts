import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { SchemaVersionError } from '../../src/db/errors/schema-version-error.js';
import { assertSchemaCurrent, runMigrations } from '../../src/db/migrate.js';
import { readMigrationFiles } from '../../src/db/migration-files.js';
import { readSqlApiFiles } from '../../src/db/sql-api-files.js';
import { createEmptyDatabase, NEEDS_POSTGRES, postgresReachable, type EmptyDatabase } from '../support/db.js';
import { runCli } from '../support/cli/run-cli.js';

// `run` with a database needs an operator (the built-in simulator never starts where DATABASE_URL
// points); none is reached: the schema check refuses first
const OPERATOR = { INTAKE_API_BASE_URL: 'http://127.0.0.1:9/intake_api/2024-12-10', INTAKE_API_KEY: 'k', INTAKE_API_SECRET: 's' };

const reachable = await postgresReachable();
const files = readMigrationFiles();

describe.skipIf(!reachable)(`schema versions (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let empty: EmptyDatabase;
  let database: Database;
  beforeAll(async () => {
    empty = await createEmptyDatabase('schema_version');
    database = await openDatabase({ url: empty.url });
  });
  afterAll(async () => {
    await database?.close();
    await empty?.drop();
  });

  it('with migrations off, an empty database is refused, naming the migrate command', async () => {
    await expect(assertSchemaCurrent(database)).rejects.toThrow(/no intake-sync schema "intake_sync" yet: run `intake-sync migrate`/);
    const result = await runCli(['run', '--once'], { ...OPERATOR, DATABASE_URL: empty.url, MIGRATE_ON_START: 'false' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('MIGRATE_ON_START=false');
    const [schema] = await empty.sql`select 1 from pg_namespace where nspname = 'intake_sync'`;
    expect(schema).toBeUndefined();
  });

  it('concurrent migrators on a fresh database apply each migration exactly once', async () => {
    const others = await Promise.all([1, 2, 3].map(() => openDatabase({ url: empty.url })));
    try {
      // only the first two migrations, so the next test finds the schema behind the code
      const applied = await Promise.all(others.map((d) => runMigrations(d, { files: files.slice(0, 2), api: [] })));
      expect(applied.flat()).toEqual(files.slice(0, 2).map((f) => f.tag));
    } finally {
      await Promise.all(others.map((d) => d.close()));
    }
    const ledger = await empty.sql<{ tag: string }[]>`select tag from intake_sync.__drizzle_migrations order by id`;
    expect(ledger.map((r) => r.tag)).toEqual(files.slice(0, 2).map((f) => f.tag));
  });

  it('with migrations off, a schema behind the code is refused, naming the pending migrations', async () => {
    const error = await assertSchemaCurrent(database).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaVersionError);
    expect((error as Error).message).toContain(
      `pending: ${files
        .slice(2)
        .map((f) => f.tag)
        .join(', ')}`,
    );
    // the versioned migrations, then every SQL API file (the partial migration applied none)
    expect(await runMigrations(database)).toEqual([
      ...files.slice(2).map((f) => f.tag),
      ...readSqlApiFiles().map((f) => `sql/api/${f.path}`),
    ]);
    await expect(assertSchemaCurrent(database)).resolves.toBeUndefined();
  });

  it('a schema migrated by a newer version is refused by run, migrate and the check alike, and nothing is written', async () => {
    await empty.sql`insert into intake_sync.__drizzle_migrations (hash, created_at, tag) values ('f'||repeat('0', 63), 9999999999999, '0099_from_the_future')`;
    const refused = /newer than this intake-sync: it has migrations this version does not know \(0099_from_the_future\)/;
    await expect(runMigrations(database)).rejects.toThrow(refused);
    await expect(assertSchemaCurrent(database)).rejects.toThrow(refused);
    for (const [args, env] of [
      [['migrate'], {}],
      [['run', '--once'], {}],
      [['run', '--once'], { MIGRATE_ON_START: 'false' }],
    ] as const) {
      const result = await runCli(args, { ...(args[0] === 'run' ? OPERATOR : {}), DATABASE_URL: empty.url, ...env });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(1);
      expect(result.stderr).toMatch(refused);
    }
    const [checkpoints] = await empty.sql<{ n: number }[]>`select count(*)::int as n from intake_sync.feed_checkpoints`;
    expect(checkpoints?.n).toBe(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../../src/db/connection.js';
import { runMigrations } from '../../../../src/db/migrate.js';
import { readMigrationFiles } from '../../../../src/db/migration-files.js';
import { migrationSummary, planFromApplied } from '../../../../src/db/migration-summary.js';
import { readSqlApiFiles } from '../../../../src/db/sql-api-files.js';
import { createEmptyDatabase, NEEDS_POSTGRES, postgresReachable, type EmptyDatabase } from '../../../support/db.js';
import { cliBudget, runCli } from '../../../support/cli/run-cli.js';

// `migrate` says what it changed, lists what it would change with --dry-run, and prints it as JSON.

const reachable = await postgresReachable();
const files = readMigrationFiles();
const api = readSqlApiFiles();
const level = (tag: string | undefined) => tag?.slice(0, 4);

describe('migrationSummary and planFromApplied (pure)', () => {
  const shipped = ['0000_a', '0001_b', '0002_c'];
  it.each([
    [
      'a fresh install',
      ['0000_a', '0001_b', '0002_c', 'sql/api/x.sql'],
      'applied 3 migrations and 1 SQL API file to schema "s" (none → 0002)',
    ],
    ['an upgrade', ['0002_c', 'sql/api/x.sql', 'sql/api/y.sql'], 'applied 1 migration and 2 SQL API files to schema "s" (0001 → 0002)'],
    ['only SQL API files', ['sql/api/x.sql'], 'applied 1 SQL API file to schema "s" (at 0002)'],
    ['nothing', [], 'schema "s" is already current at 0002'],
  ])('%s', (_label, applied, line) => {
    expect(migrationSummary(planFromApplied('s', shipped, applied), false)).toBe(line);
  });
});

describe.skipIf(!reachable)(`migrate reports what it changed (${reachable ? 'real PostgreSQL' : NEEDS_POSTGRES})`, () => {
  let db: EmptyDatabase;
  const behind = files.slice(0, -3);

  beforeAll(async () => {
    db = await createEmptyDatabase('migrate_report');
    // a schema three migrations behind this build, its SQL API never applied
    const database = await openDatabase({ url: db.url });
    await runMigrations(database, { files: behind, api: [] });
    await database.close();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it(
    '--dry-run lists each pending migration and SQL API file, then migrate applies them and says so, then it is current',
    async () => {
      const env = { DATABASE_URL: db.url };
      const range = `(${level(behind.at(-1)?.tag)} → ${level(files.at(-1)?.tag)})`;
      const dry = await runCli(['migrate', '--dry-run'], env);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout.split('\n')).toEqual([
        `would apply 3 migrations and ${api.length} SQL API files to schema "intake_sync" ${range} (DATABASE_URL); configured feeds: default`,
        ...files.slice(-3).map((f) => `  migration ${f.tag}`),
        ...api.map((f) => `  sql/api/${f.path}`),
        '',
      ]);

      const json = await runCli(['migrate', '--dry-run', '--json'], env);
      expect(JSON.parse(json.stdout)).toMatchObject({ dry_run: true, migrations: files.slice(-3).map((f) => f.tag) });

      const applied = await runCli(['migrate'], env);
      expect(applied.code, applied.stderr).toBe(0);
      expect(applied.stdout).toBe(
        `applied 3 migrations and ${api.length} SQL API files to schema "intake_sync" ${range} (DATABASE_URL); configured feeds: default\n`,
      );

      const again = await runCli(['migrate', '--json'], env);
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toEqual({
        schema: 'intake_sync',
        dry_run: false,
        from: files.at(-1)?.tag,
        to: files.at(-1)?.tag,
        migrations: [],
        sql_api_files: [],
        feeds: ['default'],
      });
      const text = await runCli(['migrate'], env);
      expect(text.stdout).toBe(
        `schema "intake_sync" is already current at ${level(files.at(-1)?.tag)} (DATABASE_URL); configured feeds: default\n`,
      );
    },
    cliBudget(5),
  );
});

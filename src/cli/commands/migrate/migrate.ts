import type { Command } from 'commander';
import { loadConfig, type Config } from '../../../config/config.js';
import { openDatabase } from '../../../db/connection.js';
import { adoptLegacyPublicInstall } from '../../../db/legacy-public-install.js';
import { registerFeeds } from '../../../db/feed-registry.js';
import { configuredFeedNames } from '../../../config/feeds-file.js';
import { assertSupportedServer } from '../../../db/server-version.js';
import { openStore, storeOptions } from '../../context/store-context.js';
import { pendingMigrations } from '../../../db/migrate.js';
import { readMigrationFiles } from '../../../db/migration-files.js';
import { migrationSummary, planFromApplied, type MigrationPlan } from '../../../db/migration-summary.js';
import { CliUsageError } from '../../context/errors.js';
import { printJson } from '../../context/output.js';
import { reassignCommand } from './migrate-reassign.js';
import { describeDroppedRoleGrants, droppedRoleGrants } from '../../../db/dropped-role-grants.js';

/** `migrate --dry-run`: what would be applied, read without a lock or a change. */
async function dryRun(config: Config, feeds: readonly string[], json: boolean): Promise<void> {
  const { database } = await openStore(config, { inspectOnly: true });
  try {
    const plan = await pendingMigrations(database);
    printPlan(plan, { dryRun: true, json, feeds, target: config.DATABASE_URL ? 'DATABASE_URL' : 'embedded PGlite' });
  } finally {
    await database.close();
  }
}

function printPlan(plan: MigrationPlan, how: { dryRun: boolean; json: boolean; feeds: readonly string[]; target: string }): void {
  if (how.json) {
    printJson({
      schema: plan.schema,
      dry_run: how.dryRun,
      from: plan.from,
      to: plan.to,
      migrations: plan.migrations,
      sql_api_files: plan.apiFiles,
      feeds: how.feeds,
    });
    return;
  }
  process.stdout.write(`${migrationSummary(plan, how.dryRun)} (${how.target}); configured feeds: ${how.feeds.join(', ')}\n`);
  // the dry run lists each one: what an operator reviews before the owner runs it for real
  if (how.dryRun) {
    for (const tag of plan.migrations) process.stdout.write(`  migration ${tag}\n`);
    for (const path of plan.apiFiles) process.stdout.write(`  sql/api/${path}\n`);
  }
}

/**
 * Registers `migrate [--adopt-public] [--dry-run] [--json]`: applies pending migrations to
 * DATABASE_SCHEMA (run it as the owner role), says what it applied, and exits; `--dry-run` lists what
 * it would apply; `--adopt-public` first moves a 0.1 install out of public.
 */
export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations to DATABASE_SCHEMA (run as the owner role)')
    .option('--adopt-public', 'move an intake-sync 0.1 install (tables in public) into DATABASE_SCHEMA with every row, then migrate')
    .option(
      '--reassign-to <role>',
      'hand DATABASE_SCHEMA and every object in it to this role (an install made as the superuser), audited; migrates nothing',
    )
    .option('--dry-run', 'list the migrations and SQL API files it would apply; change nothing')
    .option('--json', 'print what it applied (or would apply) as one JSON object')
    .action(async (options: { adoptPublic?: boolean; reassignTo?: string; dryRun?: boolean; json?: boolean }) => {
      const config = loadConfig();
      const target = config.DATABASE_URL ? 'DATABASE_URL' : 'embedded PGlite';
      if (options.reassignTo !== undefined) {
        if (options.dryRun || options.json) throw new CliUsageError('--reassign-to: takes neither --dry-run nor --json');
        return reassignCommand(config, options.reassignTo, options.adoptPublic === true);
      }
      if (options.adoptPublic && (options.dryRun || options.json))
        throw new CliUsageError('--adopt-public: takes neither --dry-run nor --json');
      if (options.adoptPublic) {
        const database = await openDatabase(storeOptions(config));
        try {
          await assertSupportedServer(database);
          const { moved, applied, revoked } = await adoptLegacyPublicInstall(database);
          process.stdout.write(
            `adopted the public install into schema "${config.DATABASE_SCHEMA}": moved ${moved.join(', ')}; applied ${applied.join(', ')} (${target})\n`,
          );
          // the grants 0.1 installs gave reached the tables directly: roles use `intake-sync grants` now
          if (revoked.length > 0) process.stdout.write(`revoked: ${revoked.join('; ')}; grant roles again with intake-sync grants\n`);
        } finally {
          await database.close();
        }
        return;
      }
      // read before anything opens: a bad FEEDS_FILE exits 2 and changes nothing
      const feeds = configuredFeedNames(config);
      if (options.dryRun) return dryRun(config, feeds, options.json === true);
      const opened = await openStore(config, { migrate: true, verifyOwnership: true });
      try {
        // the SQL API accepts a feed once it is configured: these are, even before their worker first runs
        await registerFeeds(opened.database.db, feeds, null);
        // a dropped role's feed records go (a role re-created later must not meet them), audited
        const forgotten = (await droppedRoleGrants(opened.database, true)).filter((g) => g.nowNamed === null);
        // on stderr with --json, whose stdout is one JSON document
        if (forgotten.length > 0)
          (options.json === true ? process.stderr : process.stdout).write(
            `removed the feed records of dropped roles: ${describeDroppedRoleGrants(forgotten)}\n`,
          );
      } finally {
        await opened.database.close();
      }
      const shipped = readMigrationFiles().map((f) => f.tag);
      printPlan(planFromApplied(config.DATABASE_SCHEMA, shipped, opened.applied), {
        dryRun: false,
        json: options.json === true,
        feeds,
        target,
      });
    });
}

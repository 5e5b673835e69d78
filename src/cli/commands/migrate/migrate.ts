import type { Command } from 'commander';
import { loadConfig } from '../../../config/config.js';
import { openDatabase } from '../../../db/connection.js';
import { adoptLegacyPublicInstall } from '../../../db/legacy-public-install.js';
import { registerFeeds } from '../../../db/feed-registry.js';
import { configuredFeedNames } from '../../../config/feeds-file.js';
import { assertSupportedServer } from '../../../db/server-version.js';
import { openStoreFromConfig, storeOptions } from '../../../daemon/store-context.js';
import { reassignCommand } from './migrate-reassign.js';
import { describeDroppedRoleGrants, droppedRoleGrants } from '../../../db/dropped-role-grants.js';

/**
 * Registers `migrate [--adopt-public]`: applies pending migrations to DATABASE_SCHEMA (run it as
 * the owner role) and exits; `--adopt-public` first moves a 0.1 install out of public.
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
    .action(async (options: { adoptPublic?: boolean; reassignTo?: string }) => {
      const config = loadConfig();
      const target = config.DATABASE_URL ? 'DATABASE_URL' : 'embedded PGlite';
      if (options.reassignTo !== undefined) return reassignCommand(config, options.reassignTo, options.adoptPublic === true);
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
      const database = await openStoreFromConfig(config, { migrate: true, verifyOwnership: true });
      try {
        // the SQL API accepts a feed once it is configured: these are, even before their worker first runs
        await registerFeeds(database.db, feeds, null);
        // a dropped role's feed records go (a role re-created later must not meet them), audited
        const forgotten = (await droppedRoleGrants(database, true)).filter((g) => g.nowNamed === null);
        if (forgotten.length > 0)
          process.stdout.write(`removed the feed records of dropped roles: ${describeDroppedRoleGrants(forgotten)}\n`);
      } finally {
        await database.close();
      }
      process.stdout.write(`migrations applied to schema "${config.DATABASE_SCHEMA}" (${target}); configured feeds: ${feeds.join(', ')}\n`);
    });
}

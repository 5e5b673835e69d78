import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { openDatabase } from '../db/connection.js';
import { adoptLegacyPublicInstall } from '../db/legacy-public-install.js';
import { assertSupportedServer } from '../db/server-version.js';
import { openStoreFromConfig, storeOptions } from './store-context.js';

/**
 * Registers `migrate [--adopt-public]`: applies pending migrations to DATABASE_SCHEMA (run it as
 * the owner role) and exits; `--adopt-public` first moves a 0.1 install out of public.
 */
export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations to DATABASE_SCHEMA (run as the owner role)')
    .option('--adopt-public', 'move an intake-sync 0.1 install (tables in public) into DATABASE_SCHEMA with every row, then migrate')
    .action(async (options: { adoptPublic?: boolean }) => {
      const config = loadConfig();
      const target = config.DATABASE_URL ? 'DATABASE_URL' : 'embedded PGlite';
      if (options.adoptPublic) {
        const database = await openDatabase(storeOptions(config));
        try {
          await assertSupportedServer(database);
          const { moved, applied } = await adoptLegacyPublicInstall(database);
          process.stdout.write(
            `adopted the public install into schema "${config.DATABASE_SCHEMA}": moved ${moved.join(', ')}; applied ${applied.join(', ')} (${target})\n`,
          );
        } finally {
          await database.close();
        }
        return;
      }
      const database = await openStoreFromConfig(config, { migrate: true });
      await database.close();
      process.stdout.write(`migrations applied to schema "${config.DATABASE_SCHEMA}" (${target})\n`);
    });
}

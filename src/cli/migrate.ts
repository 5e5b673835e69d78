import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { withStore } from './store-context.js';

/** Registers `migrate`: applies pending migrations to the configured store and exits. */
export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations (DATABASE_URL, or the embedded store under DATA_DIR)')
    .action(async () => {
      // opening the store applies the migrations
      const kind = await withStore(loadConfig(), async (database) => database.kind);
      process.stdout.write(`migrations applied (${kind === 'postgres' ? 'DATABASE_URL' : 'embedded PGlite'})\n`);
    });
}

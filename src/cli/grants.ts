import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { grantStatements, isPlainRoleName, type GrantRole } from '../db/grants.js';
import { CliUsageError } from './errors.js';

/**
 * Registers `grants --role runtime|app --to ROLE`: prints the GRANT statements that role needs in
 * DATABASE_SCHEMA, for the owner to run (`intake-sync grants --role runtime --to sync | psql`).
 * Connects to nothing.
 */
export function registerGrantsCommand(program: Command): void {
  program
    .command('grants')
    .description('print the GRANT statements a runtime or app role needs in DATABASE_SCHEMA (run them as the owner)')
    .requiredOption('--role <kind>', "runtime (the daemon) or app (the vendor's applications: SQL API only)")
    .requiredOption('--to <role>', 'the Postgres role to grant to')
    .action((options: { role: string; to: string }) => {
      if (options.role !== 'runtime' && options.role !== 'app') throw new CliUsageError('--role must be runtime or app');
      if (!isPlainRoleName(options.to)) throw new CliUsageError('--to must be a plain role name (letters, digits, _ $ -; at most 63)');
      const statements = grantStatements(options.role as GrantRole, loadConfig().DATABASE_SCHEMA, options.to);
      process.stdout.write(`${statements.join('\n')}\n`);
    });
}

import type { Command } from 'commander';
import { loadConfig } from '../../../config/config.js';
import { feedAccessStatements, type FeedAccess } from '../../../db/feed-access.js';
import { FEED_NAME_PATTERN, FEED_NAME_RULE } from '../../../db/feed-name.js';
import { grantStatements, isPlainRoleName, type GrantRole } from '../../../db/grants.js';
import { CliUsageError } from '../../context/errors.js';

interface GrantsOptions {
  role: string;
  to: string;
  feed: string[];
  allFeeds?: boolean;
}

/** What `--feed`/`--all-feeds` ask for, checked (exit 2 naming the option). */
export function feedAccessOf(role: GrantRole, options: Pick<GrantsOptions, 'feed' | 'allFeeds'>): FeedAccess {
  const feeds = options.feed;
  if (feeds.length > 0 && options.allFeeds) throw new CliUsageError('give either --feed (repeatable) or --all-feeds, not both');
  if (role === 'runtime' && (feeds.length > 0 || options.allFeeds)) {
    throw new CliUsageError('--feed and --all-feeds apply to --role app: the runtime role may use every feed');
  }
  for (const feed of feeds) {
    if (!FEED_NAME_PATTERN.test(feed)) throw new CliUsageError(`--feed ${JSON.stringify(feed)}: ${FEED_NAME_RULE}`);
  }
  if (feeds.length > 0) return { kind: 'feeds', feeds };
  return options.allFeeds ? { kind: 'all' } : { kind: 'unchanged' };
}

/** Every statement `grants` prints, in one transaction: the GRANTs, then the feed record and its audit row. */
export function grantsScript(role: GrantRole, schema: string, roleName: string, access: FeedAccess): string[] {
  return ['BEGIN;', ...grantStatements(role, schema, roleName), ...feedAccessStatements(role, schema, roleName, access), 'COMMIT;'];
}

/**
 * What the command prints: psql stops at the first failing statement and exits non-zero
 * (`ON_ERROR_STOP`), so `intake-sync grants … | psql "$OWNER_URL"` cannot hide a refusal behind
 * "current transaction is aborted" lines and exit 0. The statements themselves stay plain SQL.
 */
export function psqlScript(statements: string[]): string[] {
  return ['\\set ON_ERROR_STOP on', ...statements];
}

/**
 * Registers `grants --role runtime|app --to ROLE [--feed F]... [--all-feeds]`: prints the statements
 * that give that role what it needs in DATABASE_SCHEMA and record which feeds an app role may use,
 * for the owner to run (`intake-sync grants --role app --to clinic_a --feed clinic-a | psql`).
 * Connects to nothing.
 */
export function registerGrantsCommand(program: Command): void {
  program
    .command('grants')
    .description('print the statements granting a runtime or app role what it needs in DATABASE_SCHEMA (run them as the owner)')
    .requiredOption('--role <kind>', "runtime (the daemon and operator commands) or app (the vendor's applications: SQL API only)")
    .requiredOption('--to <role>', 'the Postgres role to grant to')
    .option(
      '--feed <feed>',
      'app only, repeatable: the feeds the role may use, replacing what it had (without --feed or --all-feeds: unchanged)',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option('--all-feeds', 'app only: the role may use every feed (removes its feed restriction)')
    .action((options: GrantsOptions) => {
      if (options.role !== 'runtime' && options.role !== 'app') throw new CliUsageError('--role must be runtime or app');
      if (!isPlainRoleName(options.to)) throw new CliUsageError('--to must be a plain role name (letters, digits, _ $ -; at most 63)');
      const role = options.role as GrantRole;
      const access = feedAccessOf(role, options);
      const statements = grantsScript(role, loadConfig().DATABASE_SCHEMA, options.to, access);
      if (role === 'app' && access.kind === 'unchanged') {
        process.stderr.write(
          `intake-sync grants: no --feed given: the feeds ${options.to} may use stay as recorded ` +
            `(every feed unless it was restricted before); name them with --feed to restrict it\n`,
        );
      }
      process.stdout.write(`${psqlScript(statements).join('\n')}\n`);
    });
}

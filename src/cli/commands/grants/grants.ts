import type { Command } from 'commander';
import { loadConfig } from '../../../config/config.js';
import type { FeedAccess } from '../../../db/feed-access.js';
import { FEED_NAME_PATTERN, FEED_NAME_RULE } from '../../../db/feed-name.js';
import { isPlainRoleName, type GrantRole } from '../../../db/grants.js';
import { grantsScript } from '../../../db/grants-script.js';
import { CliUsageError } from '../../context/errors.js';

interface GrantsOptions {
  role: string;
  to: string;
  feed: string[];
  allFeeds?: boolean;
  newFeed?: boolean;
}

/**
 * What `--feed`/`--all-feeds` ask for, checked (exit 2 naming the option). An app role must be told
 * which feeds (issue 33 §6: fail closed): without either option a re-created role of a dropped
 * one's name was granted every feed.
 */
export function feedAccessOf(role: GrantRole, options: Pick<GrantsOptions, 'feed' | 'allFeeds' | 'newFeed'>): FeedAccess {
  const feeds = options.feed;
  if (feeds.length > 0 && options.allFeeds) throw new CliUsageError('give either --feed (repeatable) or --all-feeds, not both');
  if (role === 'runtime' && (feeds.length > 0 || options.allFeeds || options.newFeed)) {
    throw new CliUsageError('--feed, --all-feeds and --new-feed apply to --role app: the runtime role may use every feed');
  }
  for (const feed of feeds) {
    if (!FEED_NAME_PATTERN.test(feed)) throw new CliUsageError(`--feed ${JSON.stringify(feed)}: ${FEED_NAME_RULE}`);
  }
  if (options.newFeed && feeds.length === 0)
    throw new CliUsageError('--new-feed goes with --feed: it accepts a --feed the database has not seen yet');
  if (feeds.length > 0) return { kind: 'feeds', feeds };
  if (options.allFeeds) return { kind: 'all' };
  if (role === 'app') {
    throw new CliUsageError('--role app needs --feed NAME (repeatable: the feeds the role may use) or --all-feeds (every feed)');
  }
  return { kind: 'unchanged' };
}

/** What the script does, as SQL comments (psql ignores them; a reader of the script sees them). */
export function grantsNotes(role: GrantRole, roleName: string, access: FeedAccess): string[] {
  const what =
    role === 'runtime'
      ? `runtime role ${roleName}: the daemon's grants; it may use every feed`
      : access.kind === 'feeds'
        ? `app role ${roleName}: the SQL API, for feed(s) ${[...new Set(access.feeds)].sort().join(', ')} only (replacing what it had)`
        : `app role ${roleName}: the SQL API, for every feed`;
  return [
    `-- intake-sync grants: ${what}`,
    '-- run as the schema owner; records of dropped roles are removed first; one transaction, stops at the first error',
  ];
}

/**
 * What the command prints: psql stops at the first failing statement and exits non-zero
 * (`ON_ERROR_STOP`), so `intake-sync grants … | psql "$OWNER_URL"` cannot hide a refusal behind
 * "current transaction is aborted" lines and exit 0. No statement returns rows, so `psql -q` prints
 * nothing on success.
 */
export function psqlScript(statements: string[], notes: string[] = []): string[] {
  return [...notes, '\\set ON_ERROR_STOP on', ...statements];
}

/**
 * Registers `grants --role runtime|app --to ROLE [--feed F]... [--all-feeds] [--new-feed]`: prints
 * the statements that give that role what it needs in DATABASE_SCHEMA and record which feeds an app
 * role may use, for the owner to run (`intake-sync grants --role app --to clinic_a --feed clinic-a | psql`).
 * Connects to nothing: the feed names are checked by the script, against the database it runs in.
 */
export function registerGrantsCommand(program: Command): void {
  program
    .command('grants')
    .description('print the statements granting a runtime or app role what it needs in DATABASE_SCHEMA (run them as the owner)')
    .requiredOption('--role <kind>', "runtime (the daemon and operator commands) or app (the vendor's applications: SQL API only)")
    .requiredOption('--to <role>', 'the Postgres role to grant to')
    .option(
      '--feed <feed>',
      'app: the feeds the role may use, repeatable, replacing what it had (required unless --all-feeds)',
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option('--all-feeds', 'app: the role may use every feed (removes its feed restriction)')
    .option(
      '--new-feed',
      'app: accept a --feed this database has not seen yet (without it, such a feed is refused, listing the known ones)',
    )
    .action((options: GrantsOptions) => {
      if (options.role !== 'runtime' && options.role !== 'app') throw new CliUsageError('--role must be runtime or app');
      if (!isPlainRoleName(options.to) || options.to.includes('$')) {
        throw new CliUsageError('--to must be a plain role name (letters, digits, _ -; at most 63)');
      }
      const role = options.role as GrantRole;
      const access = feedAccessOf(role, options);
      const statements = grantsScript(role, loadConfig().DATABASE_SCHEMA, options.to, access, { newFeed: options.newFeed === true });
      process.stdout.write(`${psqlScript(statements, grantsNotes(role, options.to, access)).join('\n')}\n`);
    });
}

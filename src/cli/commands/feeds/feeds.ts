import type { Command } from 'commander';
import { loadConfig } from '../../../config/config.js';
import { osActor } from '../../../db/audit.js';
import { FEED_NAME_PATTERN, FEED_NAME_RULE } from '../../../db/feed-name.js';
import { withStore } from '../../context/store-context.js';
import { FeedPauseRefusedError } from '../../../sync/leadership/errors/feed-pause-refused-error.js';
import { pauseFeed, resumeFeed } from '../../../sync/leadership/feed-pauses.js';
import { listFeedRoster } from '../../../sync/leadership/feed-roster.js';
import { CliUsageError } from '../../context/errors.js';
import { printJson, printTable } from '../../context/output.js';
import { terminalSafe } from '../../../lib/terminal-text.js';

const REASON_CODE = /^[a-z][a-z0-9_.-]{0,63}$/;

/** `--feed` of pause/resume: a name of the feed-name rule (the database then says whether it is configured). */
function feedArgument(feed: string): string {
  if (!FEED_NAME_PATTERN.test(feed)) throw new CliUsageError(`--feed: ${FEED_NAME_RULE}`);
  return feed;
}

/** A refusal of pause_feed/resume_feed is the user's input (exit 2), with the function's own message. */
async function refusalsAsUsage<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof FeedPauseRefusedError) throw new CliUsageError(error.message, { cause: error });
    throw error;
  }
}

/** Registers `feeds list | pause | resume`. */
export function registerFeedsCommands(program: Command): void {
  const feeds = program.command('feeds').description("the deployment's feeds: who leads each, its state; pause and resume one");

  feeds
    .command('list')
    .description('every feed of the deployment: leader, state (running, paused, stopped and why, retired, no leader), lag, open findings')
    .option('--json', 'one JSON object per line')
    .action(async (options: { json?: boolean }) => {
      const config = loadConfig();
      const rows = await withStore(config, ({ db }) => listFeedRoster(db, Date.now()));
      if (options.json) for (const row of rows) printJson(row);
      else printTable(['feed', 'state', 'why', 'leader', 'lag_seconds', 'open_findings', 'since'] as const, rows);
    });

  feeds
    .command('pause')
    .description('stop every replica polling and sending for one feed (within a lease check) and silence its lag alerts; audited')
    .requiredOption('--feed <name>', 'the feed to pause')
    .requiredOption('--reason <code>', 'why, as a short code shown in metrics and alerts and audited: clinic_leaving, operator_review, ...')
    .option('--json', 'print the result as one JSON line')
    .action(async (options: { feed: string; reason: string; json?: boolean }) => {
      const feed = feedArgument(options.feed);
      if (!REASON_CODE.test(options.reason))
        throw new CliUsageError(
          '--reason: must be a code of 1-64 a-z 0-9 _ . - starting with a letter (clinic_leaving, operator_review, ...)',
        );
      const config = loadConfig();
      const newly = await refusalsAsUsage(() => withStore(config, ({ db }) => pauseFeed(db, feed, options.reason, osActor())));
      if (options.json) return printJson({ feed, paused: true, reason: options.reason, was_paused: !newly });
      process.stdout.write(
        `${terminalSafe(newly ? `feed ${feed} paused (${options.reason}): every replica stops polling it within a lease check` : `feed ${feed} was already paused; its reason is now ${options.reason}`)}\n`,
      );
    });

  feeds
    .command('resume')
    .description('let a paused feed poll again (within a lease check); audited')
    .requiredOption('--feed <name>', 'the feed to resume')
    .option('--json', 'print the result as one JSON line')
    .action(async (options: { feed: string; json?: boolean }) => {
      const feed = feedArgument(options.feed);
      const config = loadConfig();
      const resumed = await refusalsAsUsage(() => withStore(config, ({ db }) => resumeFeed(db, feed, osActor())));
      if (options.json) return printJson({ feed, resumed });
      process.stdout.write(
        `${terminalSafe(resumed ? `feed ${feed} resumed: its leader polls again within a lease check` : `feed ${feed} was not paused`)}\n`,
      );
    });
}

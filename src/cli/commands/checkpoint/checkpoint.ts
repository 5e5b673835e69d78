import { terminalSafe } from '../../../lib/terminal-text.js';
import type { Command } from 'commander';
import { loadConfig, type Config } from '../../../config/config.js';
import type { Db } from '../../../db/connection.js';
import type { FeedConfig } from '../../../config/feeds-file.js';
import { whoRanThis } from '../../../lib/who-ran-this.js';
import { BadRequestError } from '../../../intake/errors/bad-request-error.js';
import { createLogger } from '../../../log/log.js';
import { loadCheckpoint, resetCheckpoint } from '../../../sync/poll/checkpoint.js';
import { listCheckpointResets, peekCheckpoint } from '../../../operations/checkpoint/checkpoint-reads.js';
import { CliUsageError } from '../../context/errors.js';
import { commandFeed, currentSource, withFeedOption } from '../../context/feed-context.js';
import { printFields, printJson } from '../../context/output.js';
import { withStore } from '../../context/store-context.js';

/** The reset target from the flags: exactly one of --beginning and --to. */
export function resetTarget(options: { beginning?: boolean; to?: string | true }): string | null {
  if (options.beginning && options.to !== undefined) throw new CliUsageError('give either --beginning or --to ITERATOR, not both');
  if (options.beginning) return null;
  if (options.to === undefined) throw new CliUsageError('give --beginning or --to ITERATOR');
  // `--to` without a value arrives as true: commander's optional argument, so we can say what is missing
  if (options.to === true || options.to.trim() === '')
    throw new CliUsageError('--to needs a non-empty iterator (use --beginning to replay from the start)');
  if (options.to !== options.to.trim()) throw new CliUsageError('--to ITERATOR has leading or trailing whitespace');
  // it goes into the checkpoint, the reset history and the audit (whose detail is bounded)
  if (options.to.length > MAX_ITERATOR_CHARS) throw new CliUsageError(`--to ITERATOR is longer than ${MAX_ITERATOR_CHARS} characters`);
  return options.to;
}

const MAX_ITERATOR_CHARS = 1_000;

/**
 * Asks the operator whether it reads from `iterator`: GET /events?iterator=X&limit=1 through the
 * feed's current source, nothing applied. A 400 is the operator refusing it: CliUsageError (exit 2),
 * nothing changed. Any other failure leaves the question open: the reset is not made (exit 1);
 * `--force` skips the check.
 */
async function checkIteratorWithOperator(config: Config, feed: FeedConfig, db: Db, iterator: string): Promise<void> {
  const { client, baseUrl } = await currentSource(config, feed, db, createLogger({ level: config.LOG_LEVEL }));
  try {
    await client.listEvents({ iterator, limit: 1 });
  } catch (error) {
    if (error instanceof BadRequestError) {
      // the operator's own words are not shown: they may quote the iterator back, or anything else
      throw new CliUsageError(
        `--to: the operator (${baseUrl}) refuses this iterator (400): nothing changed. Check it, or use --force to set it anyway`,
      );
    }
    const what = error instanceof Error ? error.message : String(error);
    throw new Error(`--to: could not check the iterator with the operator (${what}): nothing changed; use --force to set it unchecked`, {
      cause: error,
    });
  }
}

/** Registers `checkpoint show` and `checkpoint reset`. */
export function registerCheckpointCommands(program: Command): void {
  const checkpoint = program.command('checkpoint').description("the feed's read position (replay by resetting it)");

  withFeedOption(checkpoint.command('show'))
    .description('iterator, fencing version, totals and the reset history')
    .option('--json', 'print one JSON object')
    .action(async (options: { feed?: string; json?: boolean }) => {
      const config = loadConfig();
      const feed = commandFeed(config, options.feed).name;
      const { current, resets } = await withStore(config, async ({ db }) => ({
        current: await loadCheckpoint(db, feed),
        resets: await listCheckpointResets(db, feed),
      }));
      if (options.json) return printJson({ ...current, resets });
      printFields([
        ['feed', current.feed],
        ['iterator', current.iterator ?? '(beginning)'],
        ['version', current.version],
        ['updated_at', current.updatedAt.toISOString()],
        ['pages_applied', current.pagesApplied],
        ['events_applied', current.eventsApplied],
        ['events_quarantined', current.eventsQuarantined],
        ['resets', resets.length],
      ]);
      for (const r of resets) {
        process.stdout.write(
          `  ${terminalSafe(`${r.at.toISOString()}  ${r.by}  ${r.from ?? '(beginning)'} -> ${r.to ?? '(beginning)'}`)}\n`,
        );
      }
    });

  withFeedOption(checkpoint.command('reset'))
    .description('move the read position; a running worker picks it up (it never overwrites a reset)')
    .option('--beginning', 'replay the whole feed')
    .option('--to [iterator]', 'continue from this iterator (checked with the operator first: GET /events?iterator=X&limit=1)')
    .option('--force', 'with --to: set the iterator without asking the operator (it is offline, or you know better)')
    .option('--dry-run', 'print what would change (feed, from, to) and change nothing')
    .option('--json', 'print the result as one JSON line')
    .action(
      async (options: { feed?: string; beginning?: boolean; to?: string | true; json?: boolean; force?: boolean; dryRun?: boolean }) => {
        const to = resetTarget(options);
        const config = loadConfig();
        const selected = commandFeed(config, options.feed);
        const feed = selected.name;
        const by = whoRanThis();
        const result = await withStore(config, async (database) => {
          if (to !== null && !options.force) await checkIteratorWithOperator(config, selected, database.db, to);
          if (options.dryRun) {
            const { iterator, version } = await peekCheckpoint(database.db, feed);
            return { from: iterator, to, version, dryRun: true };
          }
          return { ...(await resetCheckpoint(database.db, feed, { to, by })), dryRun: false };
        });
        if (options.json) return printJson({ feed, ...result, by });
        const move = `${result.from ?? '(beginning)'} -> ${result.to ?? '(beginning)'}`;
        process.stdout.write(
          result.dryRun
            ? `dry run: checkpoint of feed ${feed} would move ${move} (now at version ${result.version}); nothing changed\n`
            : `checkpoint of feed ${feed}: ${move} (version ${result.version}, by ${by})\n`,
        );
      },
    );
}

import { hostname, userInfo } from 'node:os';
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { listCheckpointResets, loadCheckpoint, resetCheckpoint } from '../sync/poll/checkpoint.js';
import { CliUsageError } from './errors.js';
import { commandFeed, withFeedOption } from './feed-context.js';
import { printFields, printJson } from './output.js';
import { withStore } from './store-context.js';

/** Who runs a reset, for the audit trail. */
export function operator(): string {
  return `${userInfo().username}@${hostname()}`;
}

/** The reset target from the flags: exactly one of --beginning and --to. */
export function resetTarget(options: { beginning?: boolean; to?: string | true }): string | null {
  if (options.beginning && options.to !== undefined) throw new CliUsageError('give either --beginning or --to ITERATOR, not both');
  if (options.beginning) return null;
  if (options.to === undefined) throw new CliUsageError('give --beginning or --to ITERATOR');
  // `--to` without a value arrives as true: commander's optional argument, so we can say what is missing
  if (options.to === true || options.to.trim() === '')
    throw new CliUsageError('--to needs a non-empty iterator (use --beginning to replay from the start)');
  if (options.to !== options.to.trim()) throw new CliUsageError('--to ITERATOR has leading or trailing whitespace');
  return options.to;
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
        process.stdout.write(`  ${r.at.toISOString()}  ${r.by}  ${r.from ?? '(beginning)'} -> ${r.to ?? '(beginning)'}\n`);
      }
    });

  withFeedOption(checkpoint.command('reset'))
    .description('move the read position; a running worker picks it up (it never overwrites a reset)')
    .option('--beginning', 'replay the whole feed')
    .option('--to [iterator]', 'continue from this iterator')
    .option('--json', 'print the result as one JSON line')
    .action(async (options: { feed?: string; beginning?: boolean; to?: string | true; json?: boolean }) => {
      const to = resetTarget(options);
      const config = loadConfig();
      const feed = commandFeed(config, options.feed).name;
      const by = operator();
      const result = await withStore(config, ({ db }) => resetCheckpoint(db, feed, { to, by }));
      if (options.json) return printJson({ feed, ...result, by });
      process.stdout.write(
        `checkpoint of feed ${feed}: ${result.from ?? '(beginning)'} -> ${result.to ?? '(beginning)'} (version ${result.version}, by ${by})\n`,
      );
    });
}

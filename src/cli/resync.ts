import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { createLogger } from '../log.js';
import { resync } from '../sync/resync.js';
import { operator } from './checkpoint.js';
import { clientFromConfig } from './client-context.js';
import { CliUsageError } from './errors.js';
import { printJson } from './output.js';
import { withStore } from './store-context.js';

/** The feed a command acts on: --feed, which must be a configured one (today FEED_NAME alone). */
export function feedOption(requested: string | undefined, configured: string): string {
  if (requested === undefined) return configured;
  if (requested !== configured) throw new CliUsageError(`--feed: no feed named "${requested}" is configured (configured: ${configured})`);
  return requested;
}

/** Registers `resync`. */
export function registerResyncCommand(program: Command): void {
  program
    .command('resync')
    .description('recover a feed whose position the operator no longer keeps: restart it at the oldest retained event and re-subscribe non-terminal prescriptions with backfill (audited; a running worker picks it up)')
    .option('--feed <name>', 'the feed (default: the configured one)')
    .option('--json', 'print the summary as one JSON line')
    .action(async (options: { feed?: string; json?: boolean }) => {
      const config = loadConfig();
      const feed = feedOption(options.feed, config.FEED_NAME);
      const log = createLogger({ level: config.LOG_LEVEL });
      const client = clientFromConfig(config, log);
      const by = operator();
      const summary = await withStore(config, ({ db }) => resync({ db, client, feed, by, log: log.child({ component: 'resync', feed }) }));
      if (options.json) return printJson({ ...summary, by });
      process.stdout.write(
        `feed ${feed}: cursor restarted at the oldest retained event (was ${summary.from ?? '(beginning)'}, version ${summary.version}, by ${by}); ` +
          `${summary.resubscribed} prescription(s) re-subscribed with backfill, ${summary.cancelled} earlier subscription(s) cancelled, ${summary.terminal} terminal left as they are\n`,
      );
    });
}

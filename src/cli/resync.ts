import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { createLogger } from '../log.js';
import { listFeedSources } from '../sync/version-migration/feed-sources.js';
import { resync } from '../sync/resync/resync.js';
import { CliUsageError } from './errors.js';
import { operator } from './checkpoint.js';
import { commandFeed, currentSourceClient, feedRemote, withFeedOption } from './feed-context.js';
import { printJson } from './output.js';
import { withStore } from './store-context.js';

/** Registers `resync`. */
export function registerResyncCommand(program: Command): void {
  withFeedOption(program.command('resync'))
    .description(
      'recover a feed whose position the operator no longer keeps: restart it at the oldest retained event and re-subscribe non-terminal prescriptions with backfill (audited; a running worker picks it up)',
    )
    .option('--json', 'print the summary as one JSON line')
    .action(async (options: { feed?: string; json?: boolean }) => {
      const config = loadConfig();
      const selected = commandFeed(config, options.feed);
      const feed = selected.name;
      const log = createLogger({ level: config.LOG_LEVEL });
      feedRemote(config, selected); // checked before anything is read or written
      const by = operator();
      // its subscriptions at the feed's current source (currentSourceClient): the version the feed reads now
      const summary = await withStore(config, async ({ db }) => {
        // the draining source's position and its subscriptions are the migration's: finish it first
        const draining = (await listFeedSources(db, feed)).filter((s) => s.state === 'draining');
        if (draining.length > 0) {
          throw new CliUsageError(
            `resync: feed ${feed} is migrating API versions (${draining.map((s) => s.baseUrl).join(', ')} still draining); ` +
              `finish 'intake-sync subscriptions migrate' first (docs/version-migration.md)`,
          );
        }
        return resync({
          db,
          client: await currentSourceClient(config, selected, db, log),
          feed,
          by,
          log: log.child({ component: 'resync', feed }),
        });
      });
      if (options.json) return printJson({ ...summary, by });
      process.stdout.write(
        `feed ${feed}: cursor restarted at the oldest retained event (was ${summary.from ?? '(beginning)'}, version ${summary.version}, by ${by}); ` +
          `${summary.resubscribed} prescription(s) re-subscribed with backfill, ${summary.cancelled} earlier subscription(s) cancelled, ${summary.terminal} terminal left as they are\n`,
      );
    });
}

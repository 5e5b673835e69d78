import type { Command } from 'commander';
import { loadConfig } from '../../../config/config.js';
import { createLogger } from '../../../log/log.js';
import { listFeedSources } from '../../../sync/version-migration/feed-sources.js';
import { resync } from '../../../operations/resync/resync.js';
import { planResync, type ResyncPlan } from '../../../operations/resync/resync-plan.js';
import { checkCursor, readStoredPosition, type CursorCheck } from '../../../operations/resync/resync-precondition.js';
import { CliUsageError } from '../../context/errors.js';
import { whoRanThis } from '../../../lib/who-ran-this.js';
import { commandFeed, currentSourceClient, feedRemote, withFeedOption } from '../../context/feed-context.js';
import { printFields, printJson } from '../../context/output.js';
import { withStore } from '../../context/store-context.js';

interface ResyncOptions {
  feed?: string;
  json?: boolean;
  dryRun?: boolean;
  force?: boolean;
}

/** How many external_ids the text dry run lists (--json lists them all). */
const SHOWN_IDS = 20;

/** Registers `resync`. */
export function registerResyncCommand(program: Command): void {
  withFeedOption(program.command('resync'))
    .description(
      'recover a feed whose position the operator no longer keeps: restart it at the oldest retained event and re-subscribe non-terminal prescriptions with backfill (audited; a running worker picks it up). Refuses a feed that is not stopped on an expired or refused cursor unless --force',
    )
    .option('--dry-run', 'print what would change (counts, external_ids) and change nothing, here or at the operator')
    .option('--force', 'resync even though the operator still serves the stored position')
    .option('--json', 'print the summary as one JSON line')
    .action(async (options: ResyncOptions) => {
      const config = loadConfig();
      const selected = commandFeed(config, options.feed);
      const feed = selected.name;
      const log = createLogger({ level: config.LOG_LEVEL });
      feedRemote(config, selected); // checked before anything is read or written
      const by = whoRanThis();
      await withStore(config, async (database) => {
        const { db } = database;
        // the draining source's position and its subscriptions are the migration's: finish it first
        const draining = (await listFeedSources(db, feed)).filter((s) => s.state === 'draining');
        if (draining.length > 0) {
          throw new CliUsageError(
            `resync: feed ${feed} is migrating API versions (${draining.map((s) => s.baseUrl).join(', ')} still draining); ` +
              `finish 'intake-sync subscriptions migrate' first (docs/version-migration.md)`,
          );
        }
        // its subscriptions at the feed's current source (currentSourceClient): the version the feed reads now
        const client = await currentSourceClient(config, selected, db, log);
        const check = await cursorCheck(feed, options.force === true, () =>
          readStoredPosition(db, feed).then((position) =>
            checkCursor({ position, client, retentionMs: config.FEED_RETENTION_MS, now: Date.now() }),
          ),
        );
        const refused = check !== undefined && check.problem === null && !options.force;
        if (options.dryRun) return printPlan(await planResync(db, feed), check, refused, options.json === true);
        if (refused) {
          throw new CliUsageError(
            `resync: feed ${feed} is not stopped for an expired cursor (${check.finding}); resync restarts its position and ` +
              're-subscribes its open prescriptions at the operator. Run it for a feed stopped on an expired or refused iterator, ' +
              'or pass --force (see what it would do with --dry-run)',
          );
        }
        // audited by resync (feed.resync: started, then finished or failed); the started row says why it ran
        const summary = await resync({
          db,
          client,
          feed,
          by,
          log: log.child({ component: 'resync', feed }),
          auditDetail: { problem: check?.problem ?? null, forced: options.force === true },
        });
        if (options.json) return printJson({ ...summary, by });
        process.stdout.write(
          `feed ${feed}: cursor restarted at the oldest retained event (was ${summary.from ?? '(beginning)'}, version ${summary.version}, by ${by}); ` +
            `${summary.resubscribed} prescription(s) re-subscribed with backfill, ${summary.cancelled} earlier subscription(s) cancelled, ${summary.terminal} terminal left as they are\n`,
        );
      });
    });
}

/**
 * Whether the feed is stopped on its cursor (undefined with --force: not asked). A failure to find
 * out (the operator unreachable) is an error without --force: nobody can tell the cursor expired.
 */
async function cursorCheck(feed: string, force: boolean, check: () => Promise<CursorCheck>): Promise<CursorCheck | undefined> {
  if (force) return undefined;
  try {
    return await check();
  } catch (error) {
    throw new Error(
      `resync: cannot tell whether feed ${feed}'s stored position expired: ${error instanceof Error ? error.message : String(error)} ` +
        '(resync needs the operator too; --force skips this check)',
      { cause: error },
    );
  }
}

function printPlan(plan: ResyncPlan, check: CursorCheck | undefined, refused: boolean, json: boolean): void {
  if (json) {
    return printJson({
      dry_run: true,
      feed: plan.feed,
      from: plan.from,
      cursor: check ? { problem: check.problem, finding: check.finding } : null,
      would_refuse: refused,
      resubscribe: plan.resubscribe,
      cancel_at_most: plan.cancel,
      terminal: plan.terminal,
    });
  }
  const ids = plan.resubscribe.slice(0, SHOWN_IDS).join(', ');
  const more = plan.resubscribe.length > SHOWN_IDS ? `, and ${plan.resubscribe.length - SHOWN_IDS} more (--json lists all)` : '';
  process.stdout.write(`resync of feed ${plan.feed}: dry run, nothing changed\n`);
  printFields([
    ['cursor', check ? `${check.problem ?? 'not stopped'}: ${check.finding}` : 'not checked (--force)'],
    ['would refuse', refused ? 'yes: not stopped for an expired cursor (needs --force)' : 'no'],
    ['restart', `from ${plan.from ?? '(beginning)'} to the oldest retained event`],
    ['re-subscribe', `${plan.resubscribe.length} prescription(s) with backfill${ids ? `: ${ids}${more}` : ''}`],
    ['cancel', `up to ${plan.cancel} earlier subscription(s)`],
    ['terminal', `${plan.terminal} delivered or rejected, left as they are`],
  ]);
}

import type { Command } from 'commander';
import { loadConfig } from '../../../config/config.js';
import { collectionMetaSchema } from '../../../intake/event.js';
import { MAX_EVENT_ID_LENGTH } from '../../../intake/limits.js';
import { isStorableText } from '../../../intake/storable-text.js';
import type { SkimmedPage } from '../../../intake/events-page-skim.js';
import { createLogger } from '../../../log/log.js';
import { loadCheckpoint } from '../../../sync/poll/checkpoint.js';
import { skipEvent, type SkippedEvent } from '../../../store-api/feeds/skip-event.js';
import { whoRanThis } from '../../../lib/who-ran-this.js';
import { CliUsageError } from '../../context/errors.js';
import { commandFeed, currentSourceClient, withFeedOption } from '../../context/feed-context.js';
import { printFields, printJson } from '../../context/output.js';
import { withStore } from '../../context/store-context.js';

/** `--at ITERATOR` or `--beginning`: exactly one. */
export function skipPosition(options: { at?: string; beginning?: boolean }): string | null {
  if (options.beginning && options.at !== undefined) throw new CliUsageError('give either --at ITERATOR or --beginning, not both');
  if (options.beginning) return null;
  if (options.at === undefined || options.at === '')
    throw new CliUsageError('give --at ITERATOR (the position /readyz names) or --beginning');
  return options.at;
}

/** What the operator's stream says follows the one event at the position; throws naming what is wrong. */
export function skipPlan(skim: SkimmedPage, at: string | null, capBytes: number): { next: string; event: SkippedEvent } {
  const where = at === null ? 'the beginning' : `iterator ${at}`;
  if (!skim.complete) throw new Error(`GET /events at ${where}: the body ended early or is not one JSON object; nothing skipped`);
  if (skim.events !== 1 || !skim.first) {
    throw new Error(`GET /events at ${where} with limit=1 returned ${skim.events} events, not one: nothing skipped`);
  }
  if (skim.bytes <= capBytes) {
    throw new CliUsageError(
      `the event at ${where} fits MAX_RESPONSE_BYTES (${skim.bytes} of ${capBytes} bytes): the daemon reads it, nothing to skip`,
    );
  }
  let meta: unknown;
  try {
    meta = skim.metaJson === undefined ? undefined : JSON.parse(skim.metaJson);
  } catch {
    meta = undefined;
  }
  const parsed = collectionMetaSchema.safeParse(meta);
  if (!parsed.success) throw new Error(`GET /events at ${where}: the page's meta is missing or not the contract's: nothing skipped`);
  if (parsed.data.iterator === at) throw new Error(`GET /events at ${where}: meta.iterator does not move past the event: nothing skipped`);
  const id = skim.first.id;
  const eventId = id !== undefined && id.length > 0 && id.length <= MAX_EVENT_ID_LENGTH && isStorableText(id) ? id : null;
  const event = { key: eventId ?? `sha256:${skim.first.sha256}`, eventId, sha256: skim.first.sha256, bytes: skim.first.bytes };
  return { next: parsed.data.iterator, event };
}

/** Registers `events skip` (issue 17): pass exactly one event too large to read, audited. */
export function registerEventsSkipCommand(program: Command): void {
  const events = program.commands.find((command) => command.name() === 'events') ?? program.command('events');
  withFeedOption(events.command('skip'))
    .description('move past the one event at the position that is larger than MAX_RESPONSE_BYTES (quarantined by fingerprint, audited)')
    .option('--at <iterator>', 'the position the feed stopped at (as /readyz and `checkpoint show` name it)')
    .option('--beginning', 'the feed stopped at its beginning')
    .option('--dry-run', 'read what follows the event and print the plan; write nothing')
    .option('--json', 'print the result as one JSON line')
    .action(async (options: { feed?: string; at?: string; beginning?: boolean; dryRun?: boolean; json?: boolean }) => {
      const at = skipPosition(options);
      const config = loadConfig();
      const feed = commandFeed(config, options.feed);
      const log = createLogger({ level: config.LOG_LEVEL });
      const capBytes = config.MAX_RESPONSE_BYTES;
      const outcome = await withStore(config, async ({ db }) => {
        const checkpoint = await loadCheckpoint(db, feed.name);
        if (checkpoint.iterator !== at) {
          throw new CliUsageError(
            `the checkpoint of feed ${feed.name} is at ${checkpoint.iterator ?? 'the beginning'}, not at ${at ?? 'the beginning'}: nothing skipped (see intake-sync checkpoint show)`,
          );
        }
        const client = await currentSourceClient(config, feed, db, log);
        // read as a stream: the body is the one too large to hold
        const skim = await client.skimEvents({ ...(at === null ? {} : { iterator: at }), limit: 1 });
        const plan = skipPlan(skim, at, capBytes);
        if (options.dryRun) return { ...plan, version: null, dryRun: true };
        const skipped = await skipEvent(db, { feed: feed.name, at, ...plan, by: whoRanThis(), capBytes });
        if (skipped === null) throw new Error(`the checkpoint of feed ${feed.name} moved meanwhile: nothing skipped`);
        // the finding's key as stored (without an id: keyed with the database's secret, not the digest)
        return { ...plan, event: { ...plan.event, key: skipped.key }, version: skipped.version, dryRun: false };
      });
      const { key, eventId, sha256, bytes } = outcome.event;
      const result = {
        feed: feed.name,
        at,
        next: outcome.next,
        key,
        event_id: eventId,
        sha256,
        bytes,
        version: outcome.version,
        dry_run: outcome.dryRun,
      };
      if (options.json) return printJson(result);
      printFields([
        ['feed', feed.name],
        ['at', at ?? '(beginning)'],
        ['next', outcome.next],
        ['event', outcome.event.key],
        ['bytes', outcome.event.bytes],
        ['sha256', outcome.event.sha256],
        [outcome.dryRun ? 'dry run' : 'version', outcome.dryRun ? 'nothing written' : outcome.version],
      ]);
    });
}

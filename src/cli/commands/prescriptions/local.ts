import { MATCH_LOCK_BUDGET_MS } from '../../../sync/matching/lock-budget.js';
import type { Command } from 'commander';
import { terminalSafe } from '../../../lib/terminal-text.js';
import { loadConfig } from '../../../config/config.js';
import type { Db } from '../../../db/connection.js';
import type { IntakeClient } from '../../../intake/client.js';
import { joinMigrationAfterSend } from '../../../store-api/feeds/migration-join.js';
import { readPrescriptionImport, type ParsedImport } from './import-file.js';
import { listLocalPrescriptions, registerLocalPrescriptions } from '../../../sync/matching/local-prescriptions.js';
import { recordedSubscriptionId, setSubscriptionId } from '../../../sync/matching/sent-prescriptions.js';
import { CliUsageError } from '../../context/errors.js';
import { parseStatusFilter } from './status-filter.js';
import { commandFeed, currentSource, feedRemote, withFeedOption } from '../../context/feed-context.js';
import { printJson, printTable } from '../../context/output.js';
import { withStore } from '../../context/store-context.js';
import { previewRegistration } from '../../../operations/matching/registration-preview.js';

/** Registers `prescriptions import` and `prescriptions list` (the local store) on the shared group. */
export function registerPrescriptionLocalCommands(prescriptions: Command): void {
  withFeedOption(prescriptions.command('import'))
    .description(
      'register prescriptions received by fax or eRx, one {"external_id", "prescription_identity"} per line; ' +
        'a file with a bad line imports nothing (exit 2) unless --skip-bad-lines',
    )
    .argument('<file>', 'NDJSON file')
    .option('--subscribe', 'also create a subscription for each imported prescription that has none yet')
    .option('--backfill', 'with --subscribe: publish events already logged for them')
    .option('--skip-bad-lines', 'import the good lines of a file that has bad ones (each skipped line is named on stderr)')
    .option('--dry-run', 'read the file and count what it would do (new, updated, held events it rematches); write nothing')
    .option('--json', 'print the summary and each bad line as JSON lines')
    .action(async (file: string, options: ImportOptions) => {
      if (options.backfill && !options.subscribe) throw new CliUsageError('--backfill only applies together with --subscribe');
      const config = loadConfig();
      const selected = commandFeed(config, options.feed);
      const feed = selected.name;
      // checked before anything is read or written; created at the feed's current source (currentSource)
      if (options.subscribe) feedRemote(config, selected);
      const parsed = await readImport(file);
      reportBadLines(file, parsed, options);
      // the exit-code rule: bad input writes nothing (exit 2), unless the caller asked to skip it
      if (parsed.bad.length > 0 && !options.skipBadLines) {
        throw new CliUsageError(
          `${file}: ${parsed.bad.length} bad line(s), nothing imported; fix them, or pass --skip-bad-lines to import the ` +
            `${parsed.good.length} good one(s)`,
        );
      }
      if (options.dryRun) {
        const preview = await withStore(config, ({ db }) => previewRegistration(db, parsed.good, { feed }));
        const summary = {
          dry_run: true,
          ...preview,
          skipped: parsed.bad.length,
          wouldSubscribe: options.subscribe ? preview.withoutSubscription : 0,
        };
        if (options.json) return printJson(summary);
        process.stdout.write(
          `dry run: would import ${preview.new} new, ${preview.updated} updated, skip ${parsed.bad.length} bad line(s); ` +
            `rematches ${preview.heldConcerned} held event(s)` +
            `${options.subscribe ? `; would subscribe ${preview.withoutSubscription}` : ''}; nothing was written\n`,
        );
        return;
      }
      let batches = 0;
      let longestLockHeldMs = 0;
      let lockHeldMs = 0;
      let lockWaitMs = 0;
      let halved = 0;
      const summary = await withStore(config, async ({ db }) => {
        // import upserts directly (not through register_prescription): each batch records one
        // prescription.import row with its counts, in the batch's transaction
        const registered = await registerLocalPrescriptions(db, parsed.good, {
          feed,
          audit: { action: 'prescription.import' },
          onBatch: (batch) => {
            batches++;
            longestLockHeldMs = Math.max(longestLockHeldMs, batch.lockHeldMs);
            lockHeldMs += batch.lockHeldMs;
            lockWaitMs += batch.lockWaitMs;
          },
          // a slow batch is retried in halves rather than holding page applies past the budget: say so
          onHalve: (rows) => {
            halved++;
            process.stderr.write(
              `a batch of ${rows} rows exceeded the ${MATCH_LOCK_BUDGET_MS} ms match-lock budget: retrying it in halves\n`,
            );
          },
        });
        const subscribed = options.subscribe
          ? await subscribeAll(db, () => currentSource(config, selected, db), parsed, options.backfill === true, feed)
          : 0;
        return {
          inserted: registered.inserted,
          updated: registered.updated,
          matched: registered.rematch.matched,
          subscribed,
          skipped: parsed.bad.length,
        };
      });
      // each batch held the match lock (page applies waited) this long at most
      if (options.json) {
        printJson({
          ...summary,
          batches,
          halved,
          longestLockHeldMs: Math.round(longestLockHeldMs),
          lockHeldMs: Math.round(lockHeldMs),
          lockWaitMs: Math.round(lockWaitMs),
        });
      } else {
        process.stdout.write(
          `imported ${summary.inserted} new, ${summary.updated} updated, skipped ${summary.skipped} bad line(s), ` +
            `matched ${summary.matched} held event(s)${options.subscribe ? `, ${summary.subscribed} subscribed` : ''}\n`,
        );
      }
    });

  withFeedOption(prescriptions.command('list'))
    .description('local prescriptions with their current status')
    .option('--status <status>', 'only prescriptions in this status')
    .option('--json', 'one JSON object per line')
    .action(async (options: { feed?: string; status?: string; json?: boolean }) => {
      const status = parseStatusFilter(options.status);
      const config = loadConfig();
      const feed = commandFeed(config, options.feed).name;
      const rows = await withStore(config, ({ db }) => listLocalPrescriptions(db, { status, feed }));
      if (options.json) for (const row of rows) printJson(row);
      else printTable(['external_id', 'status', 'status_occurred_at', 'events', 'subscription_id', 'cancellation_requested_at'], rows);
    });
}

interface ImportOptions {
  feed?: string;
  subscribe?: boolean;
  backfill?: boolean;
  skipBadLines?: boolean;
  dryRun?: boolean;
  json?: boolean;
}

/** Names each bad line on stderr (or as JSON lines), saying whether it is skipped or blocks the import. */
function reportBadLines(file: string, parsed: ParsedImport, options: ImportOptions): void {
  const verdict = options.skipBadLines ? 'skipped' : 'bad';
  for (const bad of parsed.bad) {
    if (options.json) printJson({ line: bad.line, [verdict]: true, error: bad.error });
    else process.stderr.write(`${terminalSafe(`${file}:${bad.line}: ${verdict}: ${bad.error}`)}\n`);
  }
}

async function readImport(file: string): Promise<ParsedImport> {
  try {
    return await readPrescriptionImport(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliUsageError(
      `cannot read import file ${terminalSafe(file)}: ${code === 'ENOENT' ? 'no such file' : (code ?? 'unreadable')}`,
      {
        cause: error,
      },
    );
  }
}

/**
 * Creates the missing subscriptions one by one, storing each id as soon as it
 * exists: a rerun after a failure resumes instead of subscribing twice.
 *
 * Subscribes each imported prescription that has no subscription yet, through the feed's current source
 * read again for each one: a migration that starts during a long import moves the rest to the new
 * version, and one created through a source that stopped being current meanwhile joins the migration
 * with its subscription id (a rerun of `subscriptions migrate` cancels it and re-creates it there).
 */
async function subscribeAll(
  db: Db,
  sourceNow: () => Promise<{ client: IntakeClient; baseUrl: string }>,
  parsed: ParsedImport,
  backfill: boolean,
  feed: string,
): Promise<number> {
  let subscribed = 0;
  const joined: string[] = [];
  for (const row of parsed.good) {
    // read for each: a migration running meanwhile may have given it one at the new version
    if (await recordedSubscriptionId(db, row.external_id, { feed })) continue;
    const { client, baseUrl } = await sourceNow();
    let id: string;
    try {
      ({ id } = await client.createSubscription({
        prescription_identity: row.prescription_identity,
        backfill_previous_events: backfill,
      }));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(
        `subscribing line ${row.line} (external_id ${row.external_id}) failed after ${subscribed} new subscription(s); rerun to resume: ${reason}`,
        { cause: error },
      );
    }
    await setSubscriptionId(db, row.external_id, id, { feed, onlyIfNone: true });
    if (await joinMigrationAfterSend(db, feed, baseUrl, row.external_id, id)) joined.push(row.external_id);
    subscribed++;
  }
  if (joined.length > 0) {
    process.stderr.write(
      `intake-sync: ${joined.length} subscription(s) were created through a source feed ${feed} moved away from meanwhile ` +
        `(${joined.join(', ')}): they joined the migration; rerun 'intake-sync subscriptions migrate' to move them\n`,
    );
  }
  return subscribed;
}

import { MATCH_LOCK_BUDGET_MS } from '../../../sync/matching/lock-budget.js';
import type { Command } from 'commander';
import { terminalSafe } from '../../../lib/terminal-text.js';
import { loadConfig } from '../../../config/config.js';
import { osActor } from '../../../db/audit.js';
import { recordAudit } from '../../../store-api/audit/audit-entries.js';
import { namesOf } from '../../../db/store-names.js';
import { TriageRefusedError } from '../../../store-api/triage/errors/triage-refused-error.js';
import { listQuarantine } from '../../../store-api/triage/quarantine-list.js';
import { QUARANTINE_REASONS, type QuarantineReason } from '../../../store-api/triage/vocabulary.js';
import { previewRematch } from '../../../operations/matching/rematch-preview.js';
import type { RematchResult } from '../../../sync/matching/rematch.js';
import { rematch, type RematchBatch } from '../../../operations/matching/rematch-held.js';
import { dismissQuarantined, resolveQuarantined, showQuarantined } from '../../../store-api/triage/finding-actions.js';
import { CliUsageError } from '../../context/errors.js';
import { commandFeed, withFeedOption } from '../../context/feed-context.js';
import { printFields, printJson, printTable } from '../../context/output.js';
import { withStore } from '../../context/store-context.js';
import { dismissedLine } from './quarantine-dismissed-line.js';

function parseReason(value: string | undefined): QuarantineReason | undefined {
  if (value === undefined) return undefined;
  if ((QUARANTINE_REASONS as readonly string[]).includes(value)) return value as QuarantineReason;
  throw new CliUsageError(`--reason must be one of ${QUARANTINE_REASONS.join(', ')} (got "${value}")`);
}

/** A refusal of the triage functions is the user's input (exit 2), with the function's own message. */
async function refusalsAsUsage<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof TriageRefusedError) throw new CliUsageError(error.message, { cause: error });
    throw error;
  }
}

/** Registers `quarantine list | show | resolve | dismiss`. */
export function registerQuarantineCommands(program: Command): void {
  const quarantine = program.command('quarantine').description('events that could not be applied: malformed, unmatched, ambiguous');
  withFeedOption(quarantine.command('list'))
    .description('open findings, oldest first (no patient data: `quarantine show` prints one identity, audited)')
    .option('--reason <reason>', `only this reason: ${QUARANTINE_REASONS.join(', ')}`)
    .option('--all', 'include closed findings (matched, resolved, dismissed)')
    .option('--json', 'one JSON object per line')
    .action(async (options: { feed?: string; reason?: string; all?: boolean; json?: boolean }) => {
      const reason = parseReason(options.reason);
      const config = loadConfig();
      const feed = commandFeed(config, options.feed).name;
      const rows = await withStore(config, ({ db }) => listQuarantine(db, { feed, reason, includeResolved: options.all }));
      if (options.json) for (const row of rows) printJson(row);
      else {
        const columns = ['event_id', 'subscription_id', 'event_name', 'reason', 'seen_count', 'last_seen_at', 'detail'] as const;
        printTable(options.all ? [...columns, 'resolution', 'resolved_at'] : columns, rows);
      }
    });

  withFeedOption(quarantine.command('show'))
    .description(
      'one finding with the patient identity the operator sent, for triage (PHI: a reveal request is committed to the audit trail first, then the read)',
    )
    .argument('<event-id>', 'the event id (or quarantine_key of a malformed event without one)')
    .option('--json', 'print it as one JSON line')
    .action(async (eventId: string, options: { feed?: string; json?: boolean }) => {
      const config = loadConfig();
      const feed = commandFeed(config, options.feed).name;
      const finding = await refusalsAsUsage(() => withStore(config, ({ db }) => showQuarantined(db, feed, eventId, { actor: osActor() })));
      if (options.json) return printJson(finding);
      const identity = finding.prescription_identity ?? {};
      printFields([
        ['event_id', finding.event_id],
        ['event_name', finding.event_name],
        ['occurred_at', finding.occurred_at],
        ['subscription_id', finding.subscription_id],
        ['reason', finding.reason],
        ['detail', finding.detail],
        ['held_since', finding.held_since],
        ['resolution', finding.resolution],
        ['resolution_note', finding.resolution_note],
        ...Object.entries(identity).map(([field, value]): [string, string] => [`identity.${field}`, value === null ? '' : String(value)]),
      ]);
    });

  withFeedOption(quarantine.command('resolve'))
    .description('apply a held unmatched/ambiguous event to a local prescription; links its subscription, whose other held events follow')
    .argument('<event-id>', 'the quarantined event')
    .argument('<external-id>', 'the local prescription it belongs to')
    .option('--json', 'print the result as one JSON line')
    .action(async (eventId: string, externalId: string, options: { feed?: string; json?: boolean }) => {
      const config = loadConfig();
      const feed = commandFeed(config, options.feed).name;
      const result = await refusalsAsUsage(() =>
        withStore(config, ({ db }) => resolveQuarantined(db, feed, eventId, externalId, { actor: osActor() })),
      );
      if (options.json) return printJson({ event_id: eventId, external_id: externalId, ...result });
      printFields([
        ['event_id', eventId],
        ['external_id', externalId],
        ['subscription_id', result.subscription_id],
        ['events applied', result.events_applied],
        ['status', result.status],
      ]);
    });

  withFeedOption(quarantine.command('dismiss'))
    .description(
      'close a finding that is not yours (any reason): the whole subscription (this finding and every other open finding of its subscription) unless --only-this-event; the events stay unapplied',
    )
    .argument('<event-id>', 'the event id (or quarantine_key of a malformed event without one)')
    .requiredOption('--reason <code>', 'why, as a short code stored in the audit trail: not_ours, operator_test, ...')
    .option('--only-this-event', "this finding only: the subscription's other open findings stay open")
    .option('--json', 'print the result as one JSON line')
    .action(async (eventId: string, options: { feed?: string; reason: string; onlyThisEvent?: boolean; json?: boolean }) => {
      const config = loadConfig();
      const feed = commandFeed(config, options.feed).name;
      const only = options.onlyThisEvent === true;
      const closed = await refusalsAsUsage(() =>
        withStore(config, ({ db }) => dismissQuarantined(db, feed, eventId, options.reason, { actor: osActor() }, only)),
      );
      if (options.json) printJson({ event_id: eventId, dismissed: closed, reason: options.reason });
      else process.stdout.write(`${terminalSafe(dismissedLine(eventId, options.reason, closed, only))}\n`);
    });
}

const summaryFields = (result: RematchResult) =>
  [
    ['examined', result.examined],
    ['matched', result.matched],
    ['still unmatched', result.stillUnmatched],
    ['still ambiguous', result.stillAmbiguous],
  ] as const;

/** Redraws one progress line on a terminal; nothing elsewhere (the summary is printed at the end). */
function batchProgress(tty: NodeJS.WriteStream | undefined) {
  let drawn = false;
  const sum: RematchResult = { examined: 0, matched: 0, stillUnmatched: 0, stillAmbiguous: 0 };
  return {
    onBatch(batch: RematchBatch) {
      sum.examined += batch.examined;
      sum.matched += batch.matched;
      if (!tty) return;
      tty.write(
        `\r\u001b[2Kbatch ${batch.batch}: ${sum.examined} examined, ${sum.matched} matched (lock held ${Math.round(batch.lockHeldMs)} ms)`,
      );
      drawn = true;
    },
    clear() {
      if (tty && drawn) tty.write('\r\u001b[2K');
    },
  };
}

/** Registers `rematch`. */
export function registerRematchCommand(program: Command): void {
  withFeedOption(program.command('rematch'))
    .description('match unmatched and ambiguous events again against the local prescriptions, in short batches')
    .option('--dry-run', 'count what would match and list the event ids with their external_id; write nothing')
    .option('--json', 'print the result as one JSON line (with --dry-run: one line per would-be match first)')
    .action(async (options: { feed?: string; dryRun?: boolean; json?: boolean }) => {
      const config = loadConfig();
      const feed = commandFeed(config, options.feed).name;
      if (options.dryRun) {
        const shown: string[] = [];
        let listed = 0;
        const result = await withStore(config, ({ db }) =>
          previewRematch(db, {
            feed,
            onMatch: (match) => {
              if (options.json) printJson({ would_match: match.event_id, external_id: match.external_id });
              else if (listed++ < 20) shown.push(`would match ${match.event_id} -> ${match.external_id}`);
            },
          }),
        );
        if (options.json) return printJson({ dry_run: true, ...result });
        for (const line of shown) process.stdout.write(`${terminalSafe(line)}\n`);
        if (result.matched > shown.length) process.stdout.write(`... and ${result.matched - shown.length} more (--json lists all)\n`);
        process.stdout.write('dry run: nothing was written\n');
        return printFields(summaryFields(result));
      }
      const tty = process.stderr.isTTY ? process.stderr : undefined;
      const progress = batchProgress(tty);
      let batches = 0;
      let longestHoldMs = 0;
      let heldMs = 0;
      let waitMs = 0;
      const result = await withStore(config, async ({ db }) => {
        const names = namesOf(db);
        let total: RematchResult | undefined;
        let failure: unknown;
        const partial: RematchResult = { examined: 0, matched: 0, stillUnmatched: 0, stillAmbiguous: 0 };
        try {
          total = await rematch(db, {
            feed,
            onBatch: (batch) => {
              batches = batch.batch;
              longestHoldMs = Math.max(longestHoldMs, batch.lockHeldMs);
              heldMs += batch.lockHeldMs;
              waitMs += batch.lockWaitMs;
              partial.examined += batch.examined;
              partial.matched += batch.matched;
              partial.stillUnmatched += batch.stillUnmatched;
              partial.stillAmbiguous += batch.stillAmbiguous;
              progress.onBatch(batch);
            },
            // a slow batch is retried in halves rather than holding page applies past the budget: say so
            onHalve: (keys) => {
              progress.clear();
              process.stderr.write(
                `a batch of ${keys} identity keys exceeded the ${MATCH_LOCK_BUDGET_MS} ms match-lock budget: retrying it in halves\n`,
              );
            },
          });
        } catch (error) {
          failure = error;
        } finally {
          progress.clear();
        }
        // one row for the run, with what the committed batches did (also when a later batch failed)
        const counts = total ?? partial;
        await db.transaction((tx) =>
          recordAudit(tx, names, {
            action: 'rematch.run',
            feed,
            detail: {
              examined: counts.examined,
              matched: counts.matched,
              still_unmatched: counts.stillUnmatched,
              still_ambiguous: counts.stillAmbiguous,
              batches,
              ...(failure ? { failed: true } : {}),
            },
          }),
        );
        if (failure) throw failure;
        return counts;
      });
      if (options.json) {
        return printJson({
          ...result,
          batches,
          longestLockHeldMs: Math.round(longestHoldMs),
          lockHeldMs: Math.round(heldMs),
          lockWaitMs: Math.round(waitMs),
        });
      }
      printFields([...summaryFields(result), ['batches', batches], ['longest lock hold ms', Math.round(longestHoldMs)]]);
    });
}

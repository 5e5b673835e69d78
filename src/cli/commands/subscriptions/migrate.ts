import type { Command } from 'commander';
import { terminalSafe } from '../../../lib/terminal-text.js';
import { loadConfig } from '../../../config/config.js';
import { parseSecureBaseUrl } from '../../../intake/base-url.js';
import { createLogger } from '../../../log/log.js';
import { listFeedSources } from '../../../sync/version-migration/feed-sources.js';
import { resolveMigrationTarget } from '../../../operations/version-migration/migration-target.js';
import { migrateSubscriptions } from '../../../operations/version-migration/subscription-migration.js';
import type { MigrationSummary } from '../../../operations/version-migration/migration-options.js';
import { whoRanThis } from '../../../lib/who-ran-this.js';
import { CliUsageError } from '../../context/errors.js';
import { commandFeed, feedRemote, withFeedOption } from '../../context/feed-context.js';
import { printJson } from '../../context/output.js';
import { withStore } from '../../context/store-context.js';
import { intakeClientFor } from '../../../config/intake-client.js';

interface MigrateCliOptions {
  feed?: string;
  toBaseUrl?: string;
  dryRun?: boolean;
  releaseAwaiting?: boolean;
  json?: boolean;
}

/** Registers `subscriptions migrate` under the `subscriptions` group. */
export function registerSubscriptionsMigrateCommand(subscriptions: Command): void {
  withFeedOption(subscriptions.command('migrate'))
    .description(
      "move every local prescription's subscription to another API version: the new one is created through --to-base-url, then the old one cancelled; the worker reads both versions until the old one is drained (resumable: rerun it after a failure)",
    )
    .requiredOption('--to-base-url <url>', "the new version's operator base URL, ending in /<YYYY-MM-DD>")
    .option('--dry-run', 'print the plan (counts and external_ids), write and send nothing')
    .option(
      '--release-awaiting',
      'finish the prescriptions still awaiting their old subscription without cancelling one (for those that never had one, e.g. registered from fax or eRx); the old source then retires',
    )
    .option('--json', 'print the summary as one JSON line')
    .action(async (options: MigrateCliOptions) => {
      const config = loadConfig();
      const selected = commandFeed(config, options.feed);
      const feed = selected.name;
      const toBaseUrl = options.toBaseUrl ?? '';
      try {
        parseSecureBaseUrl(toBaseUrl);
      } catch (error) {
        throw new CliUsageError(`--to-base-url: ${error instanceof Error ? error.message : String(error)}`);
      }
      // the same account under both versions: the feed's own credentials
      const remote = feedRemote(config, selected);
      const log = createLogger({ level: config.LOG_LEVEL }).child({ component: 'subscriptions-migrate', feed });
      const clientOf = (baseUrl: string) => intakeClientFor(config, { ...remote, baseUrl }, { logger: log });
      const summary = await withStore(config, async ({ db }) => {
        // every check before anything is written or sent
        const target = resolveMigrationTarget(feed, remote.baseUrl, await listFeedSources(db, feed), toBaseUrl);
        return migrateSubscriptions({
          db,
          feed,
          target,
          newClient: clientOf(target.to.baseUrl),
          oldClient: clientOf(target.from.baseUrl),
          dryRun: options.dryRun ?? false,
          releaseAwaiting: options.releaseAwaiting ?? false,
          by: whoRanThis(),
          log,
          progress: (done, total, externalId, state) =>
            process.stderr.write(`${terminalSafe(`subscriptions migrate: ${done}/${total} ${externalId}${progressNote(state)}`)}\n`),
        });
      });
      if (options.json) return printJson(summary);
      process.stdout.write(summaryText(summary));
    });
}

const progressNote = (state: string): string =>
  state === 'done'
    ? ''
    : state === 'released'
      ? ' (released: no old subscription to cancel was ever seen)'
      : ' (moved; its old subscription is not known yet)';

/** The summary for a human: counts and identifiers only. */
export function summaryText(s: MigrationSummary): string {
  if (s.dry_run) {
    const ids = s.external_ids ?? [];
    return (
      `dry run, nothing written or sent: feed ${s.feed} from ${s.from} to ${s.to} (${s.target_version})\n` +
      `${s.prescriptions} prescription(s) in the migration, ${s.already_done} already moved, ${ids.length} to move` +
      `${s.awaiting_old_subscription > 0 ? ` (${s.awaiting_old_subscription} whose old subscription is not known yet)` : ''}:\n` +
      ids.map((id) => `  ${id}\n`).join('')
    );
  }
  return (
    `feed ${s.feed}: ${s.prescriptions} prescription(s) at ${s.target_version} (${s.already_done} already before this run); ` +
    `${s.created} subscription(s) created, ${s.adopted} adopted, ${s.duplicate_possible} possibly duplicated, ` +
    `${s.cancelled} old cancelled, ${s.already_gone} already gone${s.released > 0 ? `, ${s.released} released without one` : ''}\n` +
    (s.complete
      ? `migration complete: the worker retires ${s.from} once it has read it to its end\n`
      : s.awaiting_send > 0
        ? `migration not complete: ${s.awaiting_send} prescription(s) sent through ${s.from} are not delivered yet (in flight when the ` +
          `migration started): rerun the same command once the outbox has delivered them\n`
        : s.awaiting_old_subscription > 0
          ? `migration not complete: ${s.awaiting_old_subscription} prescription(s) await their old subscription (its id is not known until ` +
            `its first event under ${s.from} arrives; the worker keeps reading it): rerun the same command to cancel them and complete ` +
            `(--release-awaiting finishes those that never had one)\n`
          : 'migration not complete: rerun the same command\n')
  );
}

import type { Command } from 'commander';
import { loadConfig } from '../../../config/config.js';
import { osActor } from '../../../db/audit.js';
import { namesOf } from '../../../db/store-names.js';
import { resolveFeeds, selectFeed } from '../../../config/feeds-file.js';
import { formatDuration } from '../../../lib/duration.js';
import { sleepUnlessAborted } from '../../../lib/loop-sleep.js';
import { createLogger } from '../../../log/log.js';
import { shortRetentions } from '../../../sync/retention/decisions.js';
import { purgeDue, purgePass, recordPass } from '../../../sync/retention/purge-pass.js';
import { RETENTION_CLASSES, RETENTION_SETTING, type RetentionCounts } from '../../../sync/retention/retention-classes.js';
import { printJson, printTable } from '../../context/output.js';
import { withStore } from '../../context/store-context.js';
import { RETENTION_BATCH, retentionPolicyFrom } from '../../../daemon/worker-settings.js';

/** Thrown when a pass left classes for later (page applies kept waiting on it): exit 1, counts printed. */
export class PurgeIncompleteError extends Error {
  override readonly name = 'PurgeIncompleteError';
}

/** Registers `purge`. */
export function registerPurgeCommand(program: Command): void {
  program
    .command('purge')
    .description(
      "one retention pass now (RETAIN_*): what the leader's cleaner does every RETENTION_INTERVAL; counts only, never row content",
    )
    .option('--feed <name>', 'only this feed (default: every configured feed)')
    .option('--dry-run', 'print what each class would lose and write nothing')
    .option('--json', 'one JSON object per feed')
    .action(async (options: { feed?: string; dryRun?: boolean; json?: boolean }) => {
      const config = loadConfig();
      const configured = resolveFeeds(config);
      // refused (exit 2) before the store is opened
      const feeds = options.feed === undefined ? configured : [selectFeed(configured, options.feed)];
      const log = createLogger({ level: config.LOG_LEVEL }).child({ component: 'purge' });
      const incomplete: string[] = [];
      await withStore(config, async (database) => {
        const names = namesOf(database.db);
        const now = Date.now();
        for (const [index, feed] of feeds.entries()) {
          const policy = retentionPolicyFrom(config, feed.retain);
          const short = shortRetentions(policy);
          if (short.length > 0)
            log.warn(
              { feed: feed.name, settings: short.map((c) => `${RETENTION_SETTING[c]}=${formatDuration(policy[c])}`) },
              'retention below one day',
            );
          // the audit rows no feed owns follow RETAIN_AUDIT, purged once per run
          const target = { feed: feed.name, policy, unscopedAuditMs: index === 0 ? config.RETAIN_AUDIT : undefined };
          let counts: RetentionCounts;
          if (options.dryRun) {
            counts = await purgeDue(database.db, names, target, now);
          } else {
            const stop = new AbortController();
            const result = await purgePass(target, {
              db: database.db,
              names,
              now,
              batch: { ...RETENTION_BATCH, detectWaiters: database.kind === 'postgres' },
              sleep: sleepUnlessAborted,
              signal: stop.signal,
            });
            counts = result.counts;
            await recordPass(database.db, names, feed.name, counts, osActor(), true);
            if (!result.complete) incomplete.push(feed.name);
          }
          report(feed.name, counts, policy, Boolean(options.dryRun), Boolean(options.json));
        }
      });
      if (incomplete.length > 0) {
        throw new PurgeIncompleteError(
          `purge: feed(s) ${incomplete.join(', ')} not finished: page applies kept waiting on its batches (the rest is left for the next pass)`,
        );
      }
    });
}

function report(feed: string, counts: RetentionCounts, policy: Record<string, number | null>, dryRun: boolean, json: boolean): void {
  if (json) {
    printJson({ feed, dry_run: dryRun, counts });
    return;
  }
  // rows: removed by this pass, or (dry run) due now
  printTable(
    ['feed', 'class', 'setting', 'keep', 'rows'],
    RETENTION_CLASSES.map((c) => ({
      feed,
      class: c,
      setting: RETENTION_SETTING[c],
      keep: formatDuration(policy[c] ?? null),
      rows: counts[c],
    })),
  );
  if (dryRun) process.stdout.write('dry run: rows due now; nothing was written\n');
}

import { createHash } from 'node:crypto';
import { ConfigError, type Config } from '../../config/config.js';
import { resolveFeeds, type FeedConfig } from '../../config/feeds-file.js';
import { SecretFileReader } from '../../config/secret-file.js';
import type { Logger } from '../../log/log.js';
import { summarizeFailure } from '../../sync/state/failure-summary.js';
import type { FeedFleet } from './feed-fleet.js';
import { planChanges, planReload, planSummary } from './reload-plan.js';
import type { ReloadMetrics } from './reload-metrics.js';

/** What started a reload: SIGHUP always reads and reports; a file event only acts on new content. */
export type ReloadTrigger = 'signal' | 'change';

/** Pure: whether a read whose content hashes to `seen` is acted on, given the last content acted on. */
export function shouldAct(trigger: ReloadTrigger, last: string | undefined, seen: string): boolean {
  return trigger === 'signal' || last !== seen;
}

/** A hash of what a read found, for comparing reads: never logged, never kept beside the values. */
export function contentKey(outcome: { feeds: readonly FeedConfig[] } | { problem: string }): string {
  return createHash('sha256').update(JSON.stringify(outcome)).digest('hex');
}

export interface FeedsReloaderOptions {
  config: Config;
  env: NodeJS.ProcessEnv;
  fleet: FeedFleet;
  metrics: ReloadMetrics;
  log: Logger;
  clock: { now(): number };
  /** what the files read at start were (their content is the baseline) */
  initial: readonly FeedConfig[];
  /** the secret files read, after each read (the watch follows them) */
  onFilesRead(files: string[]): void;
  /** after a plan that changed the feeds was applied: deadlines written, metrics rebuilt */
  onApplied(next: readonly FeedConfig[]): Promise<void>;
}

/**
 * Re-reads FEEDS_FILE (and the secret files it names) and applies the difference to the running
 * feeds (reload-plan.ts). A bad file is refused with one line per problem, as at start, and the
 * running feeds keep running; the reload metrics say so. Reloads are serialised.
 */
export class FeedsReloader {
  private last: string;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly options: FeedsReloaderOptions) {
    this.last = contentKey({ feeds: options.initial });
  }

  /** Resolves once no reload is under way (the daemon awaits it before closing what reloads use). */
  settled(): Promise<void> {
    return this.queue;
  }

  /** Queues one reload; resolves when it has been applied or refused. Never rejects. */
  reload(trigger: ReloadTrigger): Promise<void> {
    this.queue = this.queue.then(() => this.once(trigger)).catch(() => {});
    return this.queue;
  }

  private async once(trigger: ReloadTrigger): Promise<void> {
    const { config, env, fleet, metrics, log, clock } = this.options;
    const secrets = new SecretFileReader();
    let next: FeedConfig[];
    try {
      next = resolveFeeds(config, env, secrets);
    } catch (error) {
      const problem = error instanceof ConfigError ? error.problems.join('\n') : summarizeFailure(error);
      this.options.onFilesRead([...secrets.paths]);
      const key = contentKey({ problem });
      if (!shouldAct(trigger, this.last, key)) return;
      this.last = key;
      metrics.failed();
      // one line per problem, as at start; values are never in them (feeds-file.ts)
      for (const line of problemLines(problem)) log.error({ trigger }, `FEEDS_FILE reload refused: ${line}`);
      log.warn({ trigger, feeds: fleet.configs().length }, 'FEEDS_FILE reload refused: the running feeds keep running');
      return;
    }
    this.options.onFilesRead([...secrets.paths]);
    const key = contentKey({ feeds: next });
    if (!shouldAct(trigger, this.last, key)) return;
    for (const warning of secrets.warnings) log.warn({ trigger }, warning);
    const plan = planReload(fleet.configs(), next);
    try {
      if (planChanges(plan)) {
        await fleet.apply(plan, next);
        await this.options.onApplied(next);
      }
    } catch (error) {
      // not applied (the database unreachable while registering a new feed, a base URL none of the
      // feed's sources): the next event or check tries again
      this.last = '';
      metrics.failed();
      log.error(
        { trigger, error: summarizeFailure(error) },
        'FEEDS_FILE reload failed while applying it; it is tried again on the next change or check',
      );
      return;
    }
    this.last = key;
    metrics.succeeded(clock.now());
    log.info({ trigger, ...planSummary(plan) }, planChanges(plan) ? 'FEEDS_FILE reloaded' : 'FEEDS_FILE read: no feed changed');
  }
}

/** The problem lines of a ConfigError message (`invalid environment:` then one indented line each). Pure. */
export function problemLines(message: string): string[] {
  const lines = message
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && line !== 'invalid environment:');
  return lines.length > 0 ? lines : [message];
}

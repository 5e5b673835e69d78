import type { Db } from '../../db/connection.js';
import { inSpan, setAttributes } from '../../telemetry/spans.js';
import { namesOf } from '../../db/store-names.js';
import { formatDuration } from '../../lib/duration.js';
import type { LoopSleep } from '../../lib/loop-sleep.js';
import type { Logger } from '../../log/log.js';
import { summarizeFailure } from '../state/failure-summary.js';
import { nextPassDelay, shortRetentions } from './decisions.js';
import { purgePass, recordPass, type BatchSettings, type PassResult } from './purge-pass.js';
import { RETENTION_SETTING, type RetentionClass, type RetentionPolicy } from './retention-classes.js';
import { StoppableLoop } from '../../lib/stoppable-loop.js';

/** What the cleaner of one feed keeps and how it paces itself. */
export interface RetentionSettings {
  policy: RetentionPolicy;
  /** RETAIN_AUDIT of the deployment, for audit rows no feed owns; undefined: left alone */
  unscopedAuditMs?: number | null | undefined;
  /** RETENTION_INTERVAL: from the end of one pass to the start of the next */
  intervalMs: number;
  /** a new leader's first pass waits this long (default: a minute, or the interval if shorter) */
  startDelayMs?: number | undefined;
  batch: BatchSettings;
}

export interface RetentionCleanerDeps {
  db: Db;
  feed: string;
  settings: RetentionSettings;
  clock: { now(): number };
  sleep: LoopSleep;
  log: Logger;
  /** after every committed batch: the purged-rows counter */
  onPurged?: ((cls: RetentionClass, rows: number) => void) | undefined;
}

// attribution of the cleaner's audit rows (the database records the daemon's role beside it)
// an attribution _audit() accepts (ATTRIBUTION_PATTERN)
const CLEANER_ACTOR = 'intake-sync.retention-cleaner';
const DEFAULT_START_DELAY_MS = 60_000;
const RETRY_MS = 5_000;

/**
 * The retention cleaner: a leader task (River's job cleaner, run on the elected leader only). One
 * pass over every class of the feed at start and every interval; each pass is small batches with a
 * short lock and statement timeout, yielding to page applies (purge-pass.ts). stop() aborts the wait
 * and the pass between batches; a batch in flight commits or rolls back on its own within its timeout.
 */
export class RetentionCleaner extends StoppableLoop {
  constructor(private readonly deps: RetentionCleanerDeps) {
    super();
  }

  /** One pass now (and its record): what `intake-sync purge` and the loop both run. */
  passOnce(signal: AbortSignal = this.stopSignal.signal): Promise<PassResult> {
    const attributes = { 'intake_sync.task': 'retention', 'intake_sync.feed': this.deps.feed };
    return inSpan('intake_sync.leader retention', { root: true, attributes }, async (span) => {
      const result = await this.pass(signal);
      setAttributes(span, {
        'intake_sync.task.outcome': result.complete ? 'complete' : 'partial',
        'intake_sync.retention.purged_rows': Object.values(result.counts).reduce((sum, rows) => sum + rows, 0),
      });
      return result;
    });
  }

  private async pass(signal: AbortSignal): Promise<PassResult> {
    const { db, feed, settings } = this.deps;
    const names = namesOf(db);
    const result = await purgePass(
      { feed, policy: settings.policy, unscopedAuditMs: settings.unscopedAuditMs },
      {
        db,
        names,
        now: this.deps.clock.now(),
        batch: settings.batch,
        sleep: this.deps.sleep,
        signal,
        onPurged: this.deps.onPurged,
      },
    );
    // a pass cut short by a stop is not a run; one that left a contended class for later still is
    if (!signal.aborted) await recordPass(db, names, feed, result.counts, CLEANER_ACTOR);
    return result;
  }

  protected async loop(): Promise<void> {
    const { log, settings } = this.deps;
    const short = shortRetentions(settings.policy);
    if (short.length > 0) {
      log.warn(
        { settings: short.map((c) => `${RETENTION_SETTING[c]}=${formatDuration(settings.policy[c])}`) },
        'retention below one day: PHI and history are purged within hours (fine for tests and drills, not for production)',
      );
    }
    let passes = 0;
    let failures = 0;
    while (!this.stopping) {
      const wait = nextPassDelay({ passes, failures }, settings.intervalMs, settings.startDelayMs ?? DEFAULT_START_DELAY_MS, RETRY_MS);
      await this.deps.sleep(wait, this.stopSignal.signal);
      if (this.stopping) break;
      const started = this.deps.clock.now();
      try {
        const { counts, complete } = await this.passOnce();
        passes += 1;
        failures = 0;
        log.info({ counts, complete, durationMs: this.deps.clock.now() - started }, 'retention pass done');
      } catch (error) {
        if (this.stopping) break;
        failures += 1;
        log.warn({ error: summarizeFailure(error), failures }, 'retention pass failed; retrying');
      }
    }
  }
}

import { ONE_DAY_MS } from '../../lib/duration.js';
import { RETENTION_CLASSES, type RetentionClass, type RetentionPolicy } from './retention-classes.js';

/**
 * Per class, the instant before which rows are due (now minus its retention); null: kept forever.
 * `now` is passed in: the cleaner's clock is injected, so tests and the benchmark move time.
 */
export function retentionCutoffs(policy: RetentionPolicy, now: number): Record<RetentionClass, Date | null> {
  return Object.fromEntries(
    RETENTION_CLASSES.map((c) => {
      const keep = policy[c];
      return [c, keep === null ? null : new Date(now - keep)];
    }),
  ) as Record<RetentionClass, Date | null>;
}

/** The classes kept less than a day: accepted (tests, drills), logged as a warning at start. */
export function shortRetentions(policy: RetentionPolicy): RetentionClass[] {
  return RETENTION_CLASSES.filter((c) => policy[c] !== null && (policy[c] as number) < ONE_DAY_MS);
}

/** How one batch ended. */
export type BatchOutcome =
  /** fewer rows than asked: nothing more is due at this cutoff */
  | { kind: 'drained'; rows: number }
  /** a full batch and nobody waited on it: more may be due */
  | { kind: 'full'; rows: number }
  /** a full or partial batch that other sessions (page applies) waited on: yield to them */
  | { kind: 'contended'; rows: number }
  /** the batch hit its lock or statement timeout and rolled back: too big, or the table is busy */
  | { kind: 'timed_out' };

export interface BatchLimits {
  minRows: number;
  maxRows: number;
  /** pause between two batches of a busy class: page applies get the tables in between */
  pauseMs: number;
  /** first backoff after contention or a timeout; doubles per consecutive one up to maxBackoffMs */
  backoffMs: number;
  maxBackoffMs: number;
}

/** What the batch loop does next. */
export interface NextBatch {
  /** false: this class is done for this pass */
  again: boolean;
  rows: number;
  delayMs: number;
  /** consecutive contended or timed-out batches */
  streak: number;
}

/**
 * After a batch of `rows` rows ended with `outcome`: a full uncontended batch goes on after a short
 * pause, growing towards maxRows; contention or a timeout halves the batch and backs off
 * (exponentially with the streak), so the cleaner yields to page applies instead of competing; a
 * drained class is done. Past `maxStreak` consecutive backoffs the class is left for the next pass.
 */
export function nextBatch(outcome: BatchOutcome, rows: number, streak: number, limits: BatchLimits, maxStreak = 8): NextBatch {
  switch (outcome.kind) {
    case 'drained':
      return { again: false, rows, delayMs: 0, streak: 0 };
    case 'full':
      return { again: true, rows: Math.min(limits.maxRows, rows * 2), delayMs: limits.pauseMs, streak: 0 };
    case 'contended':
    case 'timed_out': {
      const next = streak + 1;
      const smaller = Math.max(limits.minRows, Math.floor(rows / 2));
      const delayMs = Math.min(limits.maxBackoffMs, limits.backoffMs * 2 ** (next - 1));
      // a contended batch that drained its class is done all the same
      if (outcome.kind === 'contended' && outcome.rows < rows) return { again: false, rows: smaller, delayMs: 0, streak: 0 };
      return { again: next <= maxStreak, rows: smaller, delayMs, streak: next };
    }
  }
}

/**
 * How long the cleaner waits before its next pass: a new leader waits `startDelayMs` (its first
 * pages come first), then one interval after the end of each pass; after a failed pass, a backoff
 * that doubles per consecutive failure, capped at the interval.
 */
export function nextPassDelay(
  state: { passes: number; failures: number },
  intervalMs: number,
  startDelayMs: number,
  retryMs: number,
): number {
  if (state.failures > 0) return Math.min(intervalMs, retryMs * 2 ** Math.min(state.failures - 1, 20));
  if (state.passes === 0) return Math.min(startDelayMs, intervalMs);
  return intervalMs;
}

import { describeCursorProblem } from '../sync/state/cursor-problem.js';
import { fatalStopLine, LOCK_BLOCKED_REPORT_FAILURES, lockBlockedLine, type WorkerSnapshot } from '../sync/state/worker-snapshot.js';

export interface ReadinessThresholds {
  /** the leader's last successful poll may be at most this old */
  maxPollAgeMs: number;
  /** not ready at this many consecutive failed polls */
  maxFailures: number;
}

export interface Readiness {
  ready: boolean;
  /** why not, one PHI-free line each; empty when ready */
  reasons: string[];
}

/** A page waiting this long for the match lock is reported by /readyz (a normal wait behind a registration is milliseconds). */
export const MATCH_LOCK_WAIT_REPORT_MS = 5_000;

/** READY_MAX_POLL_AGE_MS when set, else three poll intervals but never under a minute. */
export function defaultMaxPollAgeMs(pollIntervalMs: number, configured?: number): number {
  return configured ?? Math.max(3 * pollIntervalMs, 60_000);
}

/**
 * /readyz: the database answers, this process is leader or standby, and as
 * leader it has polled successfully (503 "no poll yet" until the first poll), recently, without
 * piling up failures, and it has not stopped for good (then only why it stopped is listed, not the
 * failures before it). Pure: the database probe result and `now` come in.
 */
export function evaluateReadiness(
  snapshot: WorkerSnapshot,
  databaseReachable: boolean,
  thresholds: ReadinessThresholds,
  now: number,
): Readiness {
  const reasons: string[] = [];
  if (!databaseReachable) reasons.push('database unreachable');
  if (snapshot.fatalReason !== null) reasons.push(fatalStopLine(snapshot.fatalReason));
  if (snapshot.cursorProblem !== null)
    reasons.push(describeCursorProblem(snapshot.cursorProblem.feed, snapshot.cursorProblem.kind, snapshot.cursorProblem));
  if (!snapshot.loopAlive) reasons.push(`worker loop died: ${snapshot.loopDeathReason ?? 'unknown'}`);
  if (snapshot.role === 'starting') reasons.push('worker starting');
  if (snapshot.role === 'stopped') reasons.push('worker stopped');
  // a page queued behind a transaction of its feed holding the match lock: say so while it waits (the
  // holder is named once the wait times out, read by the server from pg_locks, never guessed here)
  if (snapshot.matchLockWaitSince !== null && now - snapshot.matchLockWaitSince >= MATCH_LOCK_WAIT_REPORT_MS) {
    reasons.push(
      `page waiting ${Math.round((now - snapshot.matchLockWaitSince) / 1000)}s for the match lock of its feed (the holder is named if the wait times out)`,
    );
  }
  // pages that keep failing on a lock (the match lock, the feed's change clock): the lock and its holder
  if (snapshot.lockBlocked !== null && snapshot.lockBlocked.failures >= LOCK_BLOCKED_REPORT_FAILURES) {
    reasons.push(lockBlockedLine(snapshot.lockBlocked));
  }
  // a feed that stopped (401, the operator refusing its position) says why: the failures that came
  // before that answer (the operator unreachable, say) are no longer what is true
  const stopped = snapshot.fatalReason !== null || snapshot.cursorProblem !== null;
  if (!stopped && snapshot.consecutiveFailures >= thresholds.maxFailures) {
    const last = snapshot.lastFailure ? ` (last, ${snapshot.lastFailure.source}: ${snapshot.lastFailure.summary})` : '';
    reasons.push(`${snapshot.consecutiveFailures} consecutive poll failures${last}`);
  }
  // a feed stopped on purpose (401, cursor) already says why; its poll age would only repeat it
  if (snapshot.role === 'leader' && !stopped) {
    if (snapshot.lastSuccessAt === null) {
      // not ready until this leader has read the feed once: until then nothing says the operator answers
      const since = snapshot.leaderSince ?? now;
      reasons.push(`no poll yet (leader for ${Math.round((now - since) / 1000)}s)`);
    } else {
      const ageMs = now - snapshot.lastSuccessAt;
      if (ageMs > thresholds.maxPollAgeMs) {
        reasons.push(`last successful poll ${Math.round(ageMs / 1000)}s ago (limit ${Math.round(thresholds.maxPollAgeMs / 1000)}s)`);
      }
    }
  }
  return { ready: reasons.length === 0, reasons };
}

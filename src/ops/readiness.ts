import { describeCursorProblem } from '../sync/state/cursor-problem.js';
import type { WorkerSnapshot } from '../sync/state/worker-state.js';

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

/** READY_MAX_POLL_AGE_MS when set, else three poll intervals but never under a minute. */
export function defaultMaxPollAgeMs(pollIntervalMs: number, configured?: number): number {
  return configured ?? Math.max(3 * pollIntervalMs, 60_000);
}

/**
 * /readyz: the database answers, this process is leader or standby, and as
 * leader it polled successfully recently without piling up failures, and it
 * has not stopped for good. Pure: the database probe result and `now` come in.
 */
export function evaluateReadiness(
  snapshot: WorkerSnapshot,
  databaseReachable: boolean,
  thresholds: ReadinessThresholds,
  now: number,
): Readiness {
  const reasons: string[] = [];
  if (!databaseReachable) reasons.push('database unreachable');
  if (snapshot.fatalReason !== null) reasons.push(`stopped consuming: ${snapshot.fatalReason}`);
  if (snapshot.cursorProblem !== null)
    reasons.push(describeCursorProblem(snapshot.cursorProblem.feed, snapshot.cursorProblem.kind, snapshot.cursorProblem.at));
  if (!snapshot.loopAlive) reasons.push(`worker loop died: ${snapshot.loopDeathReason ?? 'unknown'}`);
  if (snapshot.role === 'starting') reasons.push('worker starting');
  if (snapshot.role === 'stopped') reasons.push('worker stopped');
  if (snapshot.consecutiveFailures >= thresholds.maxFailures) {
    const last = snapshot.lastFailure ? ` (last, ${snapshot.lastFailure.source}: ${snapshot.lastFailure.summary})` : '';
    reasons.push(`${snapshot.consecutiveFailures} consecutive poll failures${last}`);
  }
  // a feed stopped on purpose (401, cursor) already says why; its poll age would only repeat it
  if (snapshot.role === 'leader' && snapshot.fatalReason === null && snapshot.cursorProblem === null) {
    // a new leader is given the same allowance, counted from when it took over
    const since = snapshot.lastSuccessAt ?? snapshot.leaderSince ?? now;
    const ageMs = now - since;
    if (ageMs > thresholds.maxPollAgeMs) {
      const what = snapshot.lastSuccessAt === null ? 'no successful poll since taking the lease' : 'last successful poll';
      reasons.push(`${what} ${Math.round(ageMs / 1000)}s ago (limit ${Math.round(thresholds.maxPollAgeMs / 1000)}s)`);
    }
  }
  return { ready: reasons.length === 0, reasons };
}

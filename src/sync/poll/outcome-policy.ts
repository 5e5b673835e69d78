import { EventsNotFoundError } from '../../intake/errors/events-not-found-error.js';
import { LockWaitTimeoutError } from '../../db/errors/lock-wait-timeout-error.js';
import { UnauthorizedError } from '../../intake/errors/unauthorized-error.js';
import { UpstreamError } from '../../intake/errors/upstream-error.js';
import { CheckpointConflictError } from '../apply/errors/checkpoint-conflict-error.js';
import { describeCursorProblem } from '../state/cursor-problem.js';
import { upstreamFailureReason } from '../state/failure-reason.js';
import { summarizeFailure } from '../state/failure-summary.js';
import type { FailureSource } from '../state/worker-snapshot.js';
import { DrainIncompleteError } from './errors/drain-incomplete-error.js';
import type { DelayReason } from './next-delay.js';
import type { PassOutcome } from './pass-outcome.js';
import type { PassMemory, PollerDeps } from './poll-loop.js';

/** What the loop does after a pass. */
export type OutcomeStep =
  /** wait (next delay for this reason), then pass again */
  | { kind: 'wait'; reason: DelayReason }
  /** pass again at once (or end, when stopping) */
  | { kind: 'again' }
  /** the operator said done: the caught-up hook, then the end of a drain or the interval wait */
  | { kind: 'caught-up' }
  /** stop consuming for good (a 401 or a wrong base URL), the reason recorded in state */
  | { kind: 'end' };

/**
 * How a failed step of a pass ends it: stopping hides every failure; a moved checkpoint is a conflict
 * (reload, never overwrite); what only a person can fix (a bad key, a wrong base URL) is fatal, since
 * retrying it only hides it; anything else backs off.
 */
export function failureOutcome(source: FailureSource, error: unknown, stopping: boolean): PassOutcome {
  if (stopping) return { kind: 'stopped' };
  if (error instanceof CheckpointConflictError) return { kind: 'conflict' };
  if (error instanceof UnauthorizedError || error instanceof EventsNotFoundError) return { kind: 'fatal', error };
  return { kind: 'failure', source, error };
}

/**
 * The poll loop's reaction to each pass's outcome: what it records in the feed's state, what it logs,
 * and what it does next. A drain (`untilCaughtUp`) ends with DrainIncompleteError where the daemon would
 * wait: on a 401, on a cursor problem, and after drainMaxFailures failures in a row.
 */
export class OutcomePolicy {
  private conflictStreak = 0;

  constructor(
    private readonly deps: Pick<PollerDeps, 'state' | 'log' | 'drainMaxFailures' | 'feed'>,
    private readonly memory: PassMemory,
  ) {}

  /** Records the outcome and says what comes next; throws DrainIncompleteError when a drain cannot finish. */
  next(outcome: PassOutcome, untilCaughtUp: boolean): OutcomeStep {
    const { state, log } = this.deps;
    this.conflictStreak = outcome.kind === 'conflict' ? this.conflictStreak + 1 : 0;
    switch (outcome.kind) {
      case 'caught-up':
        return { kind: 'caught-up' };
      case 'no-progress': {
        const streak = state.snapshot().noProgressStreak;
        log.warn({ streak }, 'page made no progress (same iterator, nothing new, not done); backing off');
        return { kind: 'wait', reason: { kind: 'no-progress', streak } };
      }
      case 'conflict':
        state.checkpointConflict();
        log.warn({ streak: this.conflictStreak }, 'checkpoint moved under this worker (reset or another worker); reloading it');
        return { kind: 'wait', reason: { kind: 'conflict', streak: this.conflictStreak } };
      case 'failure': {
        const summary = summarizeFailure(outcome.error);
        const reason = outcome.source === 'upstream' ? upstreamFailureReason(outcome.error) : undefined;
        const lockWait = outcome.error instanceof LockWaitTimeoutError ? outcome.error.lock : undefined;
        const failures = state.pollFailed(outcome.source, summary, reason, lockWait);
        log.warn({ source: outcome.source, failures, error: summary }, 'poll failed; backing off');
        if (untilCaughtUp && failures >= (this.deps.drainMaxFailures ?? Infinity)) {
          throw new DrainIncompleteError(`gave up after ${failures} consecutive failures; last: ${summary}`, { cause: outcome.error });
        }
        const retryAfterMs = outcome.error instanceof UpstreamError ? outcome.error.retryAfterMs : undefined;
        return { kind: 'wait', reason: { kind: 'failure', consecutiveFailures: failures, retryAfterMs } };
      }
      case 'fatal': {
        const summary = summarizeFailure(outcome.error);
        state.fatal(summary);
        const why =
          outcome.error instanceof EventsNotFoundError
            ? 'the operator base URL is wrong (404 on /events); stopped consuming (fix it and restart)'
            : 'operator refused our credentials; stopped consuming (fix them and restart)';
        log.error({ error: summary }, why);
        if (untilCaughtUp) throw new DrainIncompleteError(`stopped: ${summary}`, { cause: outcome.error });
        return { kind: 'end' };
      }
      case 'cursor': {
        const feed = this.deps.feed ?? 'default';
        const context = { at: outcome.at, reset: outcome.reset ?? null };
        const reason = describeCursorProblem(feed, outcome.problem, context);
        const entering = this.memory.heldAtVersion === undefined;
        this.memory.heldAtVersion = outcome.version;
        state.cursorStopped(feed, outcome.problem, context);
        if (entering) log.error({ problem: outcome.problem, version: outcome.version }, reason);
        if (untilCaughtUp) throw new DrainIncompleteError(reason);
        // no request to the operator until the checkpoint moves: each wait re-reads only the checkpoint
        return { kind: 'wait', reason: { kind: 'caught-up' } };
      }
      case 'held':
        return { kind: 'wait', reason: { kind: 'caught-up' } };
      case 'stopped':
        return { kind: 'again' };
    }
  }
}

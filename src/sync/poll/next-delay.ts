import { fullJitterDelay } from '../../lib/backoff.js';
import { slotDelay, slotDelayAfterPoll } from './poll-phase.js';

/** Why the loop is about to wait; each kind has its own schedule. */
export type DelayReason =
  /** the last page said done: poll again after the interval */
  | { readonly kind: 'caught-up' }
  /** a page came back at the same iterator with nothing new, yet not done */
  | { readonly kind: 'no-progress'; readonly streak: number }
  /**
   * fetch, apply or checkpoint load failed `consecutiveFailures` times in a row; `retryAfterMs`: the
   * operator's Retry-After on the failed response (a 429 or 503 the client stopped retrying)
   */
  | { readonly kind: 'failure'; readonly consecutiveFailures: number; readonly retryAfterMs?: number | undefined }
  /** the checkpoint moved under us `streak` times in a row (reset or another worker) */
  | { readonly kind: 'conflict'; readonly streak: number };

/** The knobs of every wait the poll loop makes. */
export interface DelayPolicy {
  readonly pollIntervalMs: number;
  /** fraction of the poll interval jitter may take off it, e.g. 0.1 = 90-100% of the interval */
  readonly pollJitterRatio: number;
  readonly failureBaseMs: number;
  readonly failureCapMs: number;
  /** no failure wait is shorter than this, so a run of unlucky jitter cannot loop hot */
  readonly failureFloorMs: number;
  /** ceiling of the growing wait after pages that make no progress */
  readonly noProgressCapMs: number;
  /** a caught-up feed polls at its slot in the interval (poll-phase.ts); undefined: the jittered interval */
  readonly caughtUpPhaseMs?: number | undefined;
}

/** Derives the policy from the poll interval alone, as the daemon does. */
export function defaultDelayPolicy(pollIntervalMs: number, failureCapMs = 60_000, caughtUpPhaseMs?: number): DelayPolicy {
  return {
    ...(caughtUpPhaseMs === undefined ? {} : { caughtUpPhaseMs }),
    pollIntervalMs,
    pollJitterRatio: 0.1,
    failureBaseMs: 500,
    failureCapMs,
    failureFloorMs: 100,
    noProgressCapMs: Math.max(pollIntervalMs, 5 * 60_000),
  };
}

/**
 * How long to wait before the next poll. Pure: `random`, `nowMs` and `pollStartedAtMs` are injected.
 * - caught up: with a phase, until the feed's next slot in the interval; else the poll interval
 *   jittered, so a fleet does not poll in step. Given `pollStartedAtMs` (the poll loop always gives
 *   it), the wait is measured from that poll's start, as the loop counts it (it takes the time since
 *   off), and the slot is the first one at least the jitter's share of the interval after that start:
 *   one poll per slot, whether the poll ended before its slot or after it. Without it, from `nowMs`;
 * - failure: full-jitter exponential backoff (the client's), never under the floor, and never sooner
 *   than a Retry-After the failed response carried (the client had stopped retrying it);
 * - no progress: the jittered poll interval doubled per repeat, capped — the
 *   operator claims more is coming but gave nothing, so treat it like caught up, only slower;
 * - conflict: the first reload is immediate (a reset is normal); repeats back off like failures.
 */
export function nextDelay(
  reason: DelayReason,
  policy: DelayPolicy,
  random: () => number,
  nowMs?: number,
  pollStartedAtMs?: number,
): number {
  switch (reason.kind) {
    case 'caught-up':
      if (policy.caughtUpPhaseMs !== undefined && pollStartedAtMs !== undefined) {
        const minGapMs = Math.round(policy.pollIntervalMs * policy.pollJitterRatio);
        return slotDelayAfterPoll(pollStartedAtMs, policy.pollIntervalMs, policy.caughtUpPhaseMs, minGapMs);
      }
      if (policy.caughtUpPhaseMs !== undefined && nowMs !== undefined)
        return slotDelay(nowMs, policy.pollIntervalMs, policy.caughtUpPhaseMs);
      return jitteredInterval(policy, random);
    case 'no-progress': {
      const grown = jitteredInterval(policy, random) * 2 ** Math.max(0, reason.streak - 1);
      return Math.round(Math.min(policy.noProgressCapMs, grown));
    }
    case 'failure':
      // a 429 the client stopped retrying (out of retries or time) still says when to come back
      return Math.max(failureDelay(reason.consecutiveFailures, policy, random), reason.retryAfterMs ?? 0);
    case 'conflict':
      return reason.streak <= 1 ? 0 : failureDelay(reason.streak - 1, policy, random);
  }
}

// jitter only shortens the interval: POLL_INTERVAL_MS stays the longest an event waits to be polled
function jitteredInterval(policy: DelayPolicy, random: () => number): number {
  return Math.round(policy.pollIntervalMs * (1 - policy.pollJitterRatio * clampUnit(random())));
}

function failureDelay(count: number, policy: DelayPolicy, random: () => number): number {
  // the first failure is attempt 0 of the backoff schedule
  const jittered = fullJitterDelay(count - 1, { baseMs: policy.failureBaseMs, capMs: policy.failureCapMs }, random);
  return Math.max(policy.failureFloorMs, jittered);
}

function clampUnit(value: number): number {
  if (!(value > 0)) return 0;
  return Math.min(value, 1);
}

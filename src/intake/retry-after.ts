import { clampUnit, fullJitterDelay, type BackoffPolicy } from '../lib/backoff.js';
import { UpstreamError } from './errors/upstream-error.js';

/**
 * Longest Retry-After we take at face value. A misconfigured proxy that says
 * "come back tomorrow" must not park the daemon for a day.
 */
export const MAX_RETRY_AFTER_MS = 60 * 60 * 1000;

// RFC 9110 HTTP-date in any of its three forms starts with a day name; requiring
// it keeps Date.parse from reading "-5" or "2" as a year.
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /;

/**
 * Retry-After (delta-seconds or HTTP-date) as milliseconds from `nowMs`.
 * Undefined for a missing, malformed or negative value; a date in the past is 0;
 * anything longer than MAX_RETRY_AFTER_MS is capped to it.
 */
export function parseRetryAfter(value: string | null, nowMs: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  if (!HTTP_DATE.test(text)) return undefined;
  // HTTP-dates are always GMT; the asctime form omits the zone, and Date.parse would read it as local time
  const at = Date.parse(/GMT$/i.test(text) ? text : `${text} GMT`);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, at - nowMs), MAX_RETRY_AFTER_MS);
}

/**
 * How long to wait before retry number `attempt` (0-based) after `error`.
 * With a Retry-After: never earlier than asked, plus up to `baseMs` of jitter so
 * clients told the same instant do not return in lockstep. Without: full jitter.
 */
export function retryDelay(attempt: number, policy: BackoffPolicy, error: unknown, random: () => number): number {
  if (error instanceof UpstreamError && error.retryAfterMs !== undefined) {
    return error.retryAfterMs + Math.floor(clampUnit(random()) * policy.baseMs);
  }
  return fullJitterDelay(attempt, policy, random);
}

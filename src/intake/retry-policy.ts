import type { BackoffPolicy } from '../lib/backoff.js';
import { retryDelay } from './retry-after.js';
import { isRetryable } from './errors/is-retryable.js';
import { NetworkError } from './errors/network-error.js';
import { ResponseSchemaError } from './errors/response-schema-error.js';
import { UpstreamError } from './errors/upstream-error.js';

/** Retry bounds for one call: backoff shape, retry count, and total time including waits. */
export interface RetryPolicy extends BackoffPolicy {
  readonly retries: number;
  readonly maxElapsedMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 6, baseMs: 250, capMs: 10_000, maxElapsedMs: 60_000 };

/**
 * How safe a call is to repeat.
 * - `repeatable`: GET and DELETE; repeating has no further effect.
 * - `reconciled`: POST /prescriptions; before repeating, the caller looks the
 *   prescription up by external_id, so a request that landed is not sent twice.
 * - `unrepeatable`: POST /subscriptions; the API has no idempotency key, so only
 *   failures where the request surely never reached the operator are retried.
 */
export type RetryMode = 'repeatable' | 'reconciled' | 'unrepeatable';

// codes that mean no byte of the request reached a server
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/** True when the failure proves the request was never processed: connection refused, DNS failure, or 429. */
export function wasSurelyNotProcessed(error: unknown): boolean {
  if (error instanceof NetworkError) return error.code !== undefined && NOT_SENT_CODES.has(error.code);
  // a rate limiter refuses before the handler runs
  return error instanceof UpstreamError && error.status === 429;
}

/**
 * True when the operator may have applied the request even though we saw a
 * failure: timeouts, resets and 5xx after sending, or a 2xx whose body was torn.
 */
export function mayHaveBeenProcessed(error: unknown): boolean {
  if (error instanceof ResponseSchemaError) return true;
  return isRetryable(error) && !wasSurelyNotProcessed(error);
}

function isWorthRetrying(mode: RetryMode, error: unknown): boolean {
  if (mode === 'unrepeatable') return wasSurelyNotProcessed(error);
  // a torn or mangled 2xx body is transient for calls that are safe to repeat
  return isRetryable(error) || error instanceof ResponseSchemaError;
}

export type RetryDecision =
  | { readonly retry: true; readonly delayMs: number }
  | { readonly retry: false; readonly reason: 'not-retryable' | 'out-of-retries' | 'out-of-time' };

/**
 * Whether to retry after `error`, and after how long: the whole retry rule of the client, in one
 * place (full-jitter backoff or Retry-After, retryDelay in retry-after.ts). `retryIndex` is 0 for
 * the first retry; past `policy.retries` there is none. A wait that would end past `maxElapsedMs`
 * is refused, so a long Retry-After fails fast instead of being cut short.
 */
export function decideRetry(input: {
  mode: RetryMode;
  error: unknown;
  retryIndex: number;
  elapsedMs: number;
  policy: RetryPolicy;
  random: () => number;
}): RetryDecision {
  if (!isWorthRetrying(input.mode, input.error)) return { retry: false, reason: 'not-retryable' };
  if (input.retryIndex >= input.policy.retries) return { retry: false, reason: 'out-of-retries' };
  const delayMs = retryDelay(input.retryIndex, input.policy, input.error, input.random);
  if (input.elapsedMs + delayMs > input.policy.maxElapsedMs) return { retry: false, reason: 'out-of-time' };
  return { retry: true, delayMs };
}

/** Exponential backoff bounds: the first retry waits up to `baseMs`, none waits more than `capMs`. */
export interface BackoffPolicy {
  readonly baseMs: number;
  readonly capMs: number;
}

/**
 * AWS "full jitter": uniform in [0, min(cap, base * 2^attempt)). `attempt` is
 * 0 for the first retry. Spreading over the whole window keeps many clients
 * that failed together from retrying together.
 */
export function fullJitterDelay(attempt: number, policy: BackoffPolicy, random: () => number): number {
  const ceiling = Math.min(policy.capMs, policy.baseMs * 2 ** Math.max(0, attempt));
  return Math.floor(clampUnit(random()) * ceiling);
}

// an injected random outside [0, 1) must not produce a negative or oversized wait
export function clampUnit(value: number): number {
  if (!(value > 0)) return 0;
  return Math.min(value, 1);
}

/**
 * Pure: ms from `nowMs` to the next lease check of a lock session that checks at `phaseMs + k *
 * everyMs` (k whole): always more than 0 and at most `everyMs`, so a caller that waits it once per
 * check calls exactly once per tick, however long its own call took.
 *
 * Why ticks: a process's feed workers each waited LEASE_RETRY_MS from the end of their own last
 * call, so after a rebalance (feeds given up and retried at scattered moments) their calls drifted
 * apart beyond the lease session's gather window, and the session sent up to one round per 20 ms:
 * 77-83 statements a second on a replica of four (docs/performance.md). Waiting for the session's
 * common tick instead, every check and take of the process joins one round per LEASE_RETRY_MS,
 * whatever happened before, and no call waits longer than it did.
 */
export function untilLeaseCheck(nowMs: number, everyMs: number, phaseMs: number): number {
  if (!(everyMs > 0)) throw new Error('a lease check interval must be positive');
  const intoTick = (((nowMs - phaseMs) % everyMs) + everyMs) % everyMs;
  return everyMs - intoTick;
}

/**
 * The page waited longer than lock_timeout (DB_LOCK_TIMEOUT_MS) for the match lock: a registration
 * or rematch transaction holds it exclusively, for instance one an application left open after
 * register_prescription. The page is retried; docs/runbook.md says how to find the holder.
 */
export class MatchLockTimeoutError extends Error {
  override readonly name = 'MatchLockTimeoutError';
}

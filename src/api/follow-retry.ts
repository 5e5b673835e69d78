import { isConnectionLoss } from '../db/connection-loss.js';

/**
 * Whether the change follower should reconnect after `error` rather than end. A lost session is
 * retried (a restart, a terminated backend, a network drop); a refused login or a missing
 * database is FATAL too, but reconnecting cannot fix it, and neither can a statement error (no
 * such function: not migrated; permission denied; a malformed cursor).
 */
export function isRetryableFollowError(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && (code.startsWith('28') || code === '3D000')) return false;
  return isConnectionLoss(error);
}

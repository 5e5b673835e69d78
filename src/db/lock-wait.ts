import { LockWaitTimeoutError } from './errors/lock-wait-timeout-error.js';
import { sqlState } from './errors/sql-state.js';

const LOCK_NOT_AVAILABLE = '55P03';
// the SQL API's lock functions raise 'lock wait: <the lock>, held by <holder>, for longer than lock_timeout (…)'
const NAMED_WAIT = /^lock wait: (.{1,600})$/s;
const RELATION = /relation "([A-Za-z0-9_]{1,63})"/;

/** The error's message and context fields, looking through drizzle's "Failed query" wrapper. */
function serverFields(error: unknown): { message: string; where: string } {
  for (let current: unknown = error, depth = 0; typeof current === 'object' && current !== null && depth < 5; depth++) {
    const { code, message, where } = current as { code?: unknown; message?: unknown; where?: unknown };
    if (code === LOCK_NOT_AVAILABLE)
      return { message: typeof message === 'string' ? message : '', where: typeof where === 'string' ? where : '' };
    current = (current as { cause?: unknown }).cause;
  }
  return { message: '', where: '' };
}

/**
 * What a lock_timeout (SQLSTATE 55P03) says about the lock waited on, PHI-free: the SQL API's own
 * message (the lock and its holder, read from pg_locks) when it raised one, else the relation named
 * in the server's context, else that the server did not name it. Never a guess at the holder.
 */
export function describeLockWait(error: unknown): string | undefined {
  if (sqlState(error) !== LOCK_NOT_AVAILABLE) return undefined;
  const { message, where } = serverFields(error);
  const named = NAMED_WAIT.exec(message);
  if (named?.[1]) return named[1];
  const relation = RELATION.exec(where)?.[1];
  return relation
    ? `a row or table lock on relation ${relation} (the server names no holder for it; see pg_locks)`
    : 'a lock the server did not name (see pg_locks)';
}

/** The error as a LockWaitTimeoutError of `what` (for instance "the page of feed a") when it is a lock_timeout; undefined otherwise. */
export function asLockWaitTimeout(error: unknown, what: string): LockWaitTimeoutError | undefined {
  const lock = describeLockWait(error);
  if (lock === undefined) return undefined;
  return new LockWaitTimeoutError(lock, `${what} waited longer than lock_timeout (DB_LOCK_TIMEOUT_MS) for ${lock}`, { cause: error });
}

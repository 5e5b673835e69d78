/**
 * A transaction waited longer than lock_timeout (DB_LOCK_TIMEOUT_MS) for a lock. `lock` says which
 * lock and who held it, as the server read it after the wait (the SQL API's lock functions name the
 * lock and its holder's pid, role and application_name from pg_locks, sql/api/locks/_lock_holder.sql);
 * a lock the server did not name is said to be unnamed, with the relation it was on when known.
 */
export class LockWaitTimeoutError extends Error {
  override readonly name = 'LockWaitTimeoutError';

  constructor(
    readonly lock: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * The change follower's connection closed while it waited for changes (a terminated backend, a
 * server restart, a dropped socket). Its code marks it a connection loss: the follower reconnects.
 */
export class FollowerSessionLostError extends Error {
  override readonly name = 'FollowerSessionLostError';
  readonly code = 'CONNECTION_CLOSED';

  constructor() {
    super('change follower: the database connection closed while waiting for changes');
  }
}

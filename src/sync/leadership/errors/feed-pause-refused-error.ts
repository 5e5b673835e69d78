/**
 * pause_feed() or resume_feed() refused its arguments and wrote nothing: a missing or malformed
 * feed or reason, a feed that is not configured. The message is the function's own (it names the
 * argument, never a value it was not given to check).
 */
export class FeedPauseRefusedError extends Error {
  override readonly name = 'FeedPauseRefusedError';

  constructor(
    message: string,
    /** the SQLSTATE the function raised: 23502, 22023 or 42704 */
    readonly sqlState: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * `run --once` waited its --wait-for-lease for a feed's lease and another process still holds it
 * (a running daemon, or a previous cron run): the message names the feed and the holder.
 */
export class LeaseHeldError extends Error {
  override readonly name = 'LeaseHeldError';
}

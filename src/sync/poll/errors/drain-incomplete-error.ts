/**
 * `run --once` could not reach the end of the feed: the operator refused our
 * credentials, or polling failed too many times in a row. The last failure is the cause.
 */
export class DrainIncompleteError extends Error {
  override readonly name = 'DrainIncompleteError';
}

/** Thrown when a polled condition does not hold before its deadline. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
}

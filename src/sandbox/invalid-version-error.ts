/** A version the simulator was asked to serve is not a YYYY-MM-DD date (or repeats). */
export class InvalidVersionError extends Error {
  override readonly name = 'InvalidVersionError';

  constructor(
    readonly version: string,
    reason: string,
  ) {
    super(`invalid API version "${version}": ${reason}`);
  }
}

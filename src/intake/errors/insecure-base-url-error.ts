/**
 * A base URL that is not https and not loopback: the bearer token and PHI
 * would cross the network in clear.
 */
export class InsecureBaseUrlError extends Error {
  override readonly name = 'InsecureBaseUrlError';

  constructor(
    readonly protocol: string,
    readonly host: string,
    options?: ErrorOptions,
  ) {
    super(`refusing base URL ${protocol}//${host}: use https:// (http:// is allowed for loopback hosts only)`, options);
  }
}

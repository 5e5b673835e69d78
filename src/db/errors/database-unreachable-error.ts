/**
 * Connecting to Postgres failed: the message names the setting the URL came from and the host it
 * tried (never the user or password), then why in words, e.g.
 * `cannot reach the database at 127.0.0.1:5499 (DATABASE_URL): connection refused`.
 * The driver's error is the cause.
 */
export class DatabaseUnreachableError extends Error {
  override readonly name = 'DatabaseUnreachableError';

  constructor(
    readonly variable: string,
    readonly address: string,
    why: string,
    options?: ErrorOptions,
  ) {
    super(`cannot reach the database at ${address} (${variable}): ${why}`, options);
  }
}

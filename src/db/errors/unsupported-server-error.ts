/** The database server is older than the oldest PostgreSQL major this release supports. */
export class UnsupportedServerError extends Error {
  override readonly name = 'UnsupportedServerError';
}

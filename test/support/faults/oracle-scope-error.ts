/** Thrown when a feed holds something the feed oracle does not model (use a clean run instead). */
export class OracleScopeError extends Error {
  override readonly name = 'OracleScopeError';
}

/**
 * Postgres' own message with its SQLSTATE, e.g. `permission denied for table outbox (42501)`.
 * Only the message and code: a server's `detail` can quote row values, which may be PHI.
 */
export function describeDatabaseError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // drizzle wraps driver errors as "Failed query: <statement>"; the cause is what the server said
  const inner = findServerError(error) ?? error;
  const code = (inner as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? `${inner.message} (${code})` : inner.message;
}

function findServerError(error: Error): Error | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return current;
  }
  return undefined;
}

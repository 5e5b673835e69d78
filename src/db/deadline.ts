/** A database call that got no answer in time: its connection is presumed stranded and must not be reused. */
export class QueryDeadlineError extends Error {
  override readonly name = 'QueryDeadlineError';
  readonly code = 'QUERY_DEADLINE';

  constructor(what: string, ms: number) {
    super(`${what}: no answer from the database within ${ms} ms`);
  }
}

/**
 * Settles like `work`, or rejects with QueryDeadlineError after `ms`. postgres.js has no
 * per-query timeout, and a query on a connection it stranded (a backend terminated
 * mid-write) or behind a silent network partition never settles; the caller then
 * throws the connection away rather than waiting on it forever.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new QueryDeadlineError(what, ms)), ms);
    timer.unref();
  });
  // the losing promise's rejection must not surface as unhandled
  work.catch(() => {});
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

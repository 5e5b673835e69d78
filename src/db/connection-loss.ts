/** postgres.js codes for a connection that is gone, and socket errnos that mean the same. */
const LOST_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  // our own client-side deadline (deadline.ts): the connection is presumed stranded
  'QUERY_DEADLINE',
]);

/**
 * True when an error means the session itself is gone (socket closed, backend
 * terminated, server shutting down), as opposed to a statement failing inside a
 * live session. SQLSTATE class 08 is connection exception, 57P0x operator
 * intervention (admin shutdown, crash shutdown, cannot connect now).
 */
export function isConnectionLoss(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  if (severity === 'FATAL' || severity === 'PANIC') return true;
  if (typeof code !== 'string') return false;
  return LOST_CODES.has(code) || code.startsWith('08') || /^57P0[1-3]$/.test(code);
}

import { DatabaseUnreachableError } from './errors/database-unreachable-error.js';
import { databaseTarget } from './url-target.js';

/** System and driver codes of a connection that never became a session, in words. */
const SOCKET_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused (is Postgres running and listening there?)',
  ENOTFOUND: 'host not found (DNS)',
  // a Unix socket path (PGHOST, host=/run/postgresql) with no socket file in it
  ENOENT: 'no such socket (is Postgres running, and is this its socket directory?)',
  EAI_AGAIN: 'host lookup failed for now (DNS)',
  ETIMEDOUT: 'connection timed out',
  CONNECT_TIMEOUT: 'connection timed out',
  ECONNRESET: 'connection reset by the server',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'connection closed by the server',
  CONNECTION_CLOSED: 'connection closed by the server',
  CONNECTION_ENDED: 'connection closed by the server',
  CONNECTION_DESTROYED: 'connection closed',
};

/** SQLSTATE classes the server answers a connection attempt with: 08 connection, 28 authorization, 3D no such database, 57P03 starting up. */
const CONNECT_SQLSTATE = /^(08|28|3D)|^57P03$/;

/**
 * Why connecting failed, when `error` is a failure to connect at all (a socket code, or the
 * server refusing the session); undefined for anything else (a failed query on a live session).
 * The server's message names a role or database, never a password. Pure.
 */
export function connectFailureReason(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return undefined;
  const words = SOCKET_CODES[code];
  if (words) return words;
  if (/^[0-9A-Z]{5}$/.test(code) && CONNECT_SQLSTATE.test(code)) return `${error.message} (${code})`;
  return undefined;
}

/**
 * Runs `body`, which connects to `url`; a failure to connect is rethrown as a
 * DatabaseUnreachableError naming `variable` (DATABASE_URL, LEASE_DATABASE_URL) and the host.
 */
export async function connectingTo<T>(variable: string, url: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    const why = connectFailureReason(error);
    if (why === undefined) throw error;
    throw new DatabaseUnreachableError(variable, databaseTarget(url).address, why, { cause: error });
  }
}

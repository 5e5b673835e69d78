import { DaemonError } from './errors.js';

/**
 * The health endpoint could not listen: names HEALTH_HOST/HEALTH_PORT and the address, e.g.
 * `cannot listen on 0.0.0.0:18182 (HEALTH_PORT): address already in use`. The socket error is the cause.
 */
export class HealthPortError extends DaemonError {
  override readonly name = 'HealthPortError';

  constructor(message: string, options: { cause: unknown }) {
    // a port another process holds or a host this machine lacks can change by itself: exit 1, as before
    super(message, { exitCode: 1, cause: options.cause });
  }
}

const LISTEN_CODES: Record<string, string> = {
  EADDRINUSE: 'address already in use (another process listens there: stop it or set another HEALTH_PORT)',
  EACCES: 'permission denied (ports below 1024 need privileges: set HEALTH_PORT above 1024)',
  EADDRNOTAVAIL: 'address not available on this machine (check HEALTH_HOST)',
  ENOTFOUND: 'host not found (check HEALTH_HOST)',
};

/** The error to throw for a failed listen on host:port; other errors pass through. Pure. */
export function healthListenError(error: unknown, host: string, port: number): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !(code in LISTEN_CODES)) return error;
  const variable = code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' ? 'HEALTH_HOST' : 'HEALTH_PORT';
  return new HealthPortError(`cannot listen on ${host}:${port} (${variable}): ${LISTEN_CODES[code]}`, { cause: error });
}

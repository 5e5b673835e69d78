import { DaemonError } from './errors.js';

/**
 * A listener could not listen: names the setting (HEALTH_PORT, CONSOLE_PORT, or the host setting)
 * and the address, e.g. `cannot listen on 0.0.0.0:18182 (HEALTH_PORT): address already in use`.
 * The socket error is the cause.
 */
export class HealthPortError extends DaemonError {
  override readonly name = 'HealthPortError';

  constructor(message: string, options: { cause: unknown }) {
    // a port another process holds or a host this machine lacks can change by itself: exit 1, as before
    super(message, { exitCode: 1, cause: options.cause });
  }
}

/** The settings a listener takes its address from. */
export interface ListenSettings {
  host: string;
  port: string;
}

const HEALTH: ListenSettings = { host: 'HEALTH_HOST', port: 'HEALTH_PORT' };

function listenProblem(code: string, settings: ListenSettings): string | undefined {
  switch (code) {
    case 'EADDRINUSE':
      return `address already in use (another process listens there: stop it or set another ${settings.port})`;
    case 'EACCES':
      return `permission denied (ports below 1024 need privileges: set ${settings.port} above 1024)`;
    case 'EADDRNOTAVAIL':
      return `address not available on this machine (check ${settings.host})`;
    case 'ENOTFOUND':
      return `host not found (check ${settings.host})`;
    default:
      return undefined;
  }
}

/** The error to throw for a failed listen on host:port; other errors pass through. Pure. */
export function healthListenError(error: unknown, host: string, port: number, settings: ListenSettings = HEALTH): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const problem = typeof code === 'string' ? listenProblem(code, settings) : undefined;
  if (problem === undefined) return error;
  const variable = code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' ? settings.host : settings.port;
  return new HealthPortError(`cannot listen on ${host}:${port} (${variable}): ${problem}`, { cause: error });
}

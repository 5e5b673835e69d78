/**
 * The host a postgres:// URL really connects to, decided the way libpq and postgres.js decide it:
 * the URL's host; else its `host=` query parameter (libpq's spelling for a socket directory or a
 * host the authority cannot hold); else PGHOST; else the default (postgres.js: localhost). The TLS
 * default (tls.ts) and every message about the target read this, so an empty host in the URL with
 * PGHOST naming a remote server is judged by that server, not taken for a local socket.
 */

/** Where the host came from, for messages. */
export type DriverHostSource = 'url' | 'host parameter' | 'PGHOST' | 'default';

export interface DriverHost {
  /** host name, address (IPv6 without brackets) or socket directory; may hold commas (several hosts) */
  host: string;
  source: DriverHostSource;
  /** a Unix socket directory (starts with '/'): never leaves the machine */
  socket: boolean;
}

/** postgres.js connects to localhost over TCP when nothing names a host. */
const DEFAULT_HOST = 'localhost';

/** The host `url` connects to given PGHOST (`pgHost`, undefined or '' when unset). Pure. */
export function driverHost(url: URL, pgHost: string | undefined): DriverHost {
  const fromUrl = decodeURIComponent(url.hostname).replace(/^\[(.*)\]$/, '$1');
  const parameter = url.searchParams.get('host');
  const [host, source]: [string, DriverHostSource] =
    fromUrl !== ''
      ? [fromUrl, 'url']
      : parameter !== null && parameter !== ''
        ? [parameter, 'host parameter']
        : pgHost !== undefined && pgHost !== ''
          ? [pgHost, 'PGHOST']
          : [DEFAULT_HOST, 'default'];
  return { host, source, socket: host.startsWith('/') };
}

/** Loopback: a socket directory, localhost (and *.localhost), ::1 or 127.0.0.0/8. Pure. */
export function isLoopbackHost(target: DriverHost): boolean {
  if (target.socket) return true;
  const h = target.host.toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost') || h === '::1') return true;
  const octets = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return octets !== null && octets[1] === '127' && octets.slice(2).every((o) => Number(o) <= 255);
}

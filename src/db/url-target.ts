import { driverHost } from './driver-host.js';

/** Where a postgres:// URL points, without its credentials: what logs and error messages may show. */
export interface DatabaseTarget {
  /** host:port (a socket directory for a Unix socket); '(unparsable URL)' when the URL does not parse */
  address: string;
  host: string;
  port: number;
  database: string;
}

/**
 * The host, port and database of a postgres:// URL, never its user or password. The host is the
 * one the driver connects to (driver-host.ts): the URL's, its `?host=` parameter, PGHOST (`pgHost`,
 * this process's unless given), else localhost.
 */
export function databaseTarget(url: string, pgHost: string | undefined = process.env.PGHOST): DatabaseTarget {
  if (!URL.canParse(url)) return { address: '(unparsable URL)', host: '', port: 5432, database: '' };
  const parsed = new URL(url);
  const { host } = driverHost(parsed, pgHost);
  const port = Number(parsed.port || parsed.searchParams.get('port') || 5432);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || decodeURIComponent(parsed.username) || '';
  return { address: `${host}:${port}`, host, port, database };
}

/** Where a postgres:// URL points, without its credentials: what logs and error messages may show. */
export interface DatabaseTarget {
  /** host:port (a socket directory for a Unix socket); '(unparsable URL)' when the URL does not parse */
  address: string;
  host: string;
  port: number;
  database: string;
}

/**
 * The host, port and database of a postgres:// URL, never its user or password. A host given as a
 * query parameter (`?host=/var/run/postgresql`) counts, as it does for the driver. Pure.
 */
export function databaseTarget(url: string): DatabaseTarget {
  if (!URL.canParse(url)) return { address: '(unparsable URL)', host: '', port: 5432, database: '' };
  const parsed = new URL(url);
  const host = decodeURIComponent(parsed.hostname) || parsed.searchParams.get('host') || 'localhost';
  const port = Number(parsed.port || parsed.searchParams.get('port') || 5432);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || decodeURIComponent(parsed.username) || '';
  return { address: `${host}:${port}`, host, port, database };
}

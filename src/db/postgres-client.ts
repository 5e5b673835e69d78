import postgres from 'postgres';
import { requireTlsSettings, type TlsSettings, urlWithoutTlsParameters } from './tls.js';
import { readTlsFiles, tlsSocketFactory } from './tls-socket.js';

/** Where a client's URL came from, and the CA file that applies when the URL names none. */
export interface ClientTls {
  /** the variable (or option) the URL came from, for messages: DATABASE_URL, LEASE_DATABASE_URL */
  variable: string;
  /** DATABASE_CA_FILE */
  caFile?: string | undefined;
  /** PGHOST, the host of a URL that names none; this process's when absent (what postgres.js reads) */
  pgHost?: string | undefined;
}

/**
 * Every postgres.js client of intake-sync is built here, so every connection (pool, page client,
 * lease session, change follower, probes) honours the URL's TLS settings the same way (tls.ts):
 * the TLS parameters leave the URL (postgres.js would send them to the server as settings), and a
 * connection that uses TLS is negotiated by tls-socket.ts with the CA, client certificate and host
 * check they name. Throws TlsSettingsError for settings that cannot be honoured or a file that
 * cannot be read.
 */
export function createPostgresClient(
  url: string,
  options: postgres.Options<Record<string, postgres.PostgresType>>,
  tls: ClientTls,
): postgres.Sql {
  const settings = requireTlsSettings(url, tls);
  // postgres.js reads the URL's host and PGHOST itself but not libpq's host= parameter (it would send
  // it as a setting): the host TLS was decided for is the host it connects to
  const host = settings.hostSource === 'host parameter' || settings.hostSource === 'PGHOST' ? { host: settings.host } : {};
  return postgres(urlWithoutTlsParameters(url), { ...options, ...host, ...tlsClientOptions(settings, options.connect_timeout) });
}

/** The postgres.js options that carry the settings: plaintext, or our own TLS negotiation. */
function tlsClientOptions(
  settings: TlsSettings,
  connectTimeoutS: number | undefined,
): postgres.Options<Record<string, postgres.PostgresType>> {
  if (settings.mode === 'disable') return { ssl: false };
  const files = readTlsFiles(settings);
  // `socket` is a documented postgres.js option its types do not list; it then skips its own TLS
  return { ssl: false, socket: tlsSocketFactory(settings, files, (connectTimeoutS ?? 30) * 1000) } as postgres.Options<
    Record<string, postgres.PostgresType>
  >;
}

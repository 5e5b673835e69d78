/**
 * TLS to PostgreSQL the way a libpq user writes it: `sslmode`, `sslrootcert`, `sslcert`, `sslkey`
 * (and `sslpassword`) in the postgres:// URL, plus DATABASE_CA_FILE for platforms that cannot put
 * a path in a URL. postgres.js alone reads only `sslmode`, ignores the CA file (and sends the other
 * parameters to the server as settings); here the URL is read once, the TLS parameters leave it,
 * and tls-socket.ts negotiates with exactly what they say.
 *
 * Loopback is judged on the host the driver really connects to (driver-host.ts): the URL's host,
 * else its `host=` parameter, else PGHOST, else localhost; `postgres:///db` with PGHOST naming a
 * remote server is that server, not a local socket.
 *
 * Unlike libpq (default `prefer`), a database that is not on loopback gets `verify-full` unless the
 * URL says otherwise in so many words: `sslmode=disable` (plaintext) or `sslmode=require`
 * (encrypted, not verified: the caller logs a warning). `allow` and `prefer`, which fall back to
 * plaintext silently, are refused for such a database.
 */
import { type DriverHost, driverHost, isLoopbackHost } from './driver-host.js';
import { TlsSettingsError } from './errors/tls-settings-error.js';

/** libpq's sslmode values. */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** How one postgres:// URL connects. */
export interface TlsSettings {
  /** the variable the URL came from, for messages (DATABASE_URL, LEASE_DATABASE_URL, the follower's url) */
  variable: string;
  /** the effective mode: the URL's, or the default this module chose (see `explicit`) */
  mode: SslMode;
  /** false when the URL named no sslmode and the mode is this module's default */
  explicit: boolean;
  /** host name or address the certificate must name (verify-full): the host the driver connects to */
  host: string;
  /** where `host` came from: the URL, its host= parameter, PGHOST or the default */
  hostSource: DriverHost['source'];
  loopback: boolean;
  /** CA bundle file: sslrootcert, else DATABASE_CA_FILE; undefined means the system's CAs */
  rootCertFile: string | undefined;
  /** which setting named rootCertFile, for messages */
  rootCertSetting: string | undefined;
  certFile: string | undefined;
  keyFile: string | undefined;
  keyPassword: string | undefined;
}

/** TLS parameters taken out of the URL (postgres.js would send unknown ones to the server as settings). */
const TLS_PARAMETERS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'sslpassword', 'sslsni', 'sslcompression'] as const;
/** Parameters postgres.js does not read but sends to the server as settings: the client passes them as options. */
const DRIVER_PARAMETERS = ['host'] as const;
/** libpq parameters this build does not implement: refused rather than silently ignored. */
const UNSUPPORTED_PARAMETERS = [
  'sslcrl',
  'sslcrldir',
  'sslcertmode',
  'sslnegotiation',
  'requiressl',
  'ssl_min_protocol_version',
  'ssl_max_protocol_version',
  'gssencmode',
  // libpq connects to hostaddr while checking the certificate against host: a second target this build does not follow
  'hostaddr',
] as const;

/** How a URL's TLS is read: the variable it came from, DATABASE_CA_FILE, and PGHOST (the host of a URL that names none). */
export interface TlsSettingsOptions {
  variable: string;
  caFile?: string | undefined;
  /** PGHOST as the driver will see it; passed in so that this stays pure (undefined or '': unset) */
  pgHost: string | undefined;
}

export type TlsSettingsResult = { settings: TlsSettings } | { problem: string };

/**
 * Reads the TLS settings of `url` (pure: no file is read here). `caFile` is DATABASE_CA_FILE; it
 * applies when the URL has no sslrootcert. Returns the problem, worded for the variable, when the
 * URL asks for something that cannot be honoured.
 */
export function tlsSettingsFor(url: string, options: TlsSettingsOptions): TlsSettingsResult {
  if (!URL.canParse(url)) return { problem: 'is not a valid URL' };
  const parsed = new URL(url);
  const params = parsed.searchParams;
  for (const name of UNSUPPORTED_PARAMETERS) {
    if (params.has(name))
      return { problem: `${name} is not supported by intake-sync (supported: ${TLS_PARAMETERS.slice(0, 5).join(', ')})` };
  }
  const target = driverHost(parsed, options.pgHost);
  const host = target.host;
  // several hosts (h1,h2): postgres.js connects itself, so only plaintext or prefer-style
  if (host.includes(',')) {
    const where = target.source === 'url' ? 'in one URL' : `in ${target.source === 'PGHOST' ? 'PGHOST' : 'the host= parameter'}`;
    return { problem: `several hosts ${where} are not supported with TLS settings; give one host` };
  }
  const loopback = isLoopbackHost(target);
  const given = params.get('sslmode');
  if (given !== null && !(SSL_MODES as readonly string[]).includes(given)) {
    return { problem: `sslmode=${given} is not one of ${SSL_MODES.join(', ')}` };
  }
  const rootcert = params.get('sslrootcert') ?? undefined;
  const rootCertFile = rootcert === 'system' ? undefined : (rootcert ?? options.caFile);
  const rootCertSetting = rootcert !== undefined && rootcert !== 'system' ? 'sslrootcert' : options.caFile ? 'DATABASE_CA_FILE' : undefined;
  let mode: SslMode;
  if (given !== null) mode = given as SslMode;
  // libpq 16: sslrootcert=system means verify-full against the system's CAs
  else if (rootcert === 'system') mode = 'verify-full';
  else mode = loopback ? 'disable' : 'verify-full';
  // libpq: require with a root certificate verifies the chain, like verify-ca
  if (mode === 'require' && rootcert !== undefined && rootcert !== 'system') mode = 'verify-ca';
  if (rootcert === 'system' && mode !== 'verify-full') {
    return { problem: `sslrootcert=system needs sslmode=verify-full (got sslmode=${mode})` };
  }
  if (!loopback && (mode === 'allow' || mode === 'prefer')) {
    return {
      problem: `sslmode=${mode} may fall back to plaintext on a database that is not on loopback (${host}): use verify-full (verified), require (encrypted, not verified) or disable (plaintext)`,
    };
  }
  const certFile = params.get('sslcert') ?? undefined;
  const keyFile = params.get('sslkey') ?? undefined;
  if ((certFile === undefined) !== (keyFile === undefined)) {
    return { problem: `a client certificate needs both sslcert and sslkey (got only ${certFile ? 'sslcert' : 'sslkey'})` };
  }
  if (certFile && mode === 'disable') return { problem: 'sslcert is set but sslmode=disable sends no certificate' };
  return {
    settings: {
      variable: options.variable,
      mode,
      explicit: given !== null || rootcert === 'system',
      host,
      hostSource: target.source,
      loopback,
      rootCertFile: mode === 'verify-ca' || mode === 'verify-full' ? rootCertFile : undefined,
      rootCertSetting: mode === 'verify-ca' || mode === 'verify-full' ? rootCertSetting : undefined,
      certFile,
      keyFile,
      keyPassword: params.get('sslpassword') ?? undefined,
    },
  };
}

/**
 * tlsSettingsFor() that throws the problem (for callers past config parsing, e.g. the public API).
 * PGHOST defaults to this process's, the one postgres.js will read.
 */
export function requireTlsSettings(
  url: string,
  options: Omit<TlsSettingsOptions, 'pgHost'> & { pgHost?: string | undefined },
): TlsSettings {
  const result = tlsSettingsFor(url, { ...options, pgHost: 'pgHost' in options ? options.pgHost : process.env.PGHOST });
  if ('problem' in result) throw new TlsSettingsError(`${options.variable}: ${result.problem}`);
  return result.settings;
}

/**
 * The URL without its TLS parameters and its host= parameter: what postgres.js is given (the rest
 * it sends as settings; the client passes the host it decided as an option).
 */
export function urlWithoutTlsParameters(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  for (const name of [...TLS_PARAMETERS, ...DRIVER_PARAMETERS]) parsed.searchParams.delete(name);
  return parsed.toString();
}

/**
 * One phrase for the start line and `doctor`: is the connection encrypted, is the server verified.
 * 'verified (verify-full)', 'verified CA only (verify-ca)', 'encrypted, not verified (require)',
 * 'plaintext (loopback)', 'plaintext (sslmode=disable)', 'TLS if offered, else plaintext (prefer)'.
 */
export function describeTls(settings: TlsSettings): string {
  switch (settings.mode) {
    case 'verify-full':
      return 'verified (verify-full)';
    case 'verify-ca':
      return 'verified CA only, host not checked (verify-ca)';
    case 'require':
      return 'encrypted, not verified (require)';
    case 'allow':
    case 'prefer':
      return `TLS if offered, else plaintext (${settings.mode})`;
    case 'disable':
      return settings.explicit ? 'plaintext (sslmode=disable)' : 'plaintext (loopback)';
  }
}

/**
 * The warning a caller logs for this connection, or undefined: encrypted without verifying the
 * server (require), or plaintext to a database that is not on loopback (disable).
 */
export function tlsWarning(settings: TlsSettings): string | undefined {
  if (settings.mode === 'require') {
    return `${settings.variable}: sslmode=require encrypts but does not verify the server (${settings.host}): anyone on the path can impersonate it; use sslmode=verify-full with sslrootcert or DATABASE_CA_FILE`;
  }
  if (settings.mode === 'disable' && !settings.loopback) {
    return `${settings.variable}: sslmode=disable sends credentials and data in plaintext to ${settings.host}`;
  }
  return undefined;
}

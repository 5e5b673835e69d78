import type { Config } from '../config/config.js';
import { describeTls, requireTlsSettings, type TlsSettings, tlsWarning } from '../db/tls.js';

/** How DATABASE_URL (and LEASE_DATABASE_URL when set) connect; undefined on embedded PGlite. */
export interface DatabaseTls {
  database: TlsSettings;
  lease: TlsSettings | undefined;
}

/** The TLS settings of the configured URLs (already validated by loadConfig). */
export function databaseTls(config: Config): DatabaseTls | undefined {
  if (!config.DATABASE_URL) return undefined;
  const caFile = config.DATABASE_CA_FILE;
  return {
    database: requireTlsSettings(config.DATABASE_URL, { variable: 'DATABASE_URL', caFile }),
    lease: config.LEASE_DATABASE_URL
      ? requireTlsSettings(config.LEASE_DATABASE_URL, { variable: 'LEASE_DATABASE_URL', caFile })
      : undefined,
  };
}

/**
 * One phrase for the start line (and `doctor`): 'verified (verify-full)', 'encrypted, not verified
 * (require)', 'plaintext (loopback)'..., the lease's too when it differs; 'embedded PGlite' without a URL.
 */
export function describeDatabaseTls(config: Config): string {
  const tls = databaseTls(config);
  if (!tls) return 'embedded PGlite';
  const database = describeTls(tls.database);
  const lease = tls.lease ? describeTls(tls.lease) : undefined;
  return lease && lease !== database ? `${database}; lease ${lease}` : database;
}

/** The warnings to log at start: encrypted without verification, or plaintext off loopback. */
export function databaseTlsWarnings(config: Config): string[] {
  const tls = databaseTls(config);
  if (!tls) return [];
  return [tls.database, tls.lease].flatMap((settings) => {
    const warning = settings ? tlsWarning(settings) : undefined;
    return warning ? [warning] : [];
  });
}

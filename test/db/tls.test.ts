import { describe, expect, it } from 'vitest';
import { describeTls, tlsSettingsFor, tlsWarning, urlWithoutTlsParameters } from '../../src/db/tls.js';

const settings = (url: string, caFile?: string) => {
  const result = tlsSettingsFor(url, { variable: 'DATABASE_URL', caFile, pgHost: undefined });
  if ('problem' in result) throw new Error(result.problem);
  return result.settings;
};
const problem = (url: string) => {
  const result = tlsSettingsFor(url, { variable: 'DATABASE_URL', pgHost: undefined });
  return 'problem' in result ? result.problem : undefined;
};

describe('tlsSettingsFor: libpq parameters, verified by default off loopback', () => {
  it.each([
    ['postgres://u@127.0.0.1:5432/db', 'disable', false, 'plaintext (loopback)'],
    ['postgres://u@localhost/db', 'disable', false, 'plaintext (loopback)'],
    ['postgres://u@[::1]:5432/db', 'disable', false, 'plaintext (loopback)'],
    ['postgres://u@db.internal:5432/db', 'verify-full', false, 'verified (verify-full)'],
    ['postgres://u@10.0.0.5/db', 'verify-full', false, 'verified (verify-full)'],
    ['postgres://u@db.internal/db?sslmode=disable', 'disable', true, 'plaintext (sslmode=disable)'],
    ['postgres://u@db.internal/db?sslmode=require', 'require', true, 'encrypted, not verified (require)'],
    ['postgres://u@db.internal/db?sslmode=verify-ca', 'verify-ca', true, 'verified CA only, host not checked (verify-ca)'],
    ['postgres://u@db.internal/db?sslrootcert=system', 'verify-full', true, 'verified (verify-full)'],
    ['postgres://u@127.0.0.1/db?sslmode=prefer', 'prefer', true, 'TLS if offered, else plaintext (prefer)'],
    // libpq: require with a root certificate verifies the chain
    [
      'postgres://u@db.internal/db?sslmode=require&sslrootcert=/ca.pem',
      'verify-ca',
      true,
      'verified CA only, host not checked (verify-ca)',
    ],
  ])('%s -> %s', (url, mode, explicit, description) => {
    const s = settings(url);
    expect(s.mode).toBe(mode);
    expect(s.explicit).toBe(explicit);
    expect(describeTls(s)).toBe(description);
  });

  it('takes the CA file from sslrootcert, else DATABASE_CA_FILE, and says which', () => {
    expect(settings('postgres://u@db/x?sslrootcert=/a.pem', '/b.pem')).toMatchObject({
      rootCertFile: '/a.pem',
      rootCertSetting: 'sslrootcert',
    });
    expect(settings('postgres://u@db/x', '/b.pem')).toMatchObject({ rootCertFile: '/b.pem', rootCertSetting: 'DATABASE_CA_FILE' });
    expect(settings('postgres://u@db/x?sslrootcert=system', '/b.pem')).toMatchObject({ rootCertFile: undefined });
    // a mode that verifies nothing reads no CA
    expect(settings('postgres://u@db/x?sslmode=disable', '/b.pem').rootCertFile).toBeUndefined();
  });

  it('reads a client certificate and its key', () => {
    expect(settings('postgres://u@db/x?sslcert=/c.crt&sslkey=/c.key&sslpassword=pw')).toMatchObject({
      certFile: '/c.crt',
      keyFile: '/c.key',
      keyPassword: 'pw',
    });
  });

  it.each([
    ['postgres://u@db/x?sslmode=verify', 'sslmode=verify is not one of disable, allow, prefer, require, verify-ca, verify-full'],
    [
      'postgres://u@db.internal/x?sslmode=prefer',
      'sslmode=prefer may fall back to plaintext on a database that is not on loopback (db.internal)',
    ],
    ['postgres://u@db.internal/x?sslmode=allow', 'sslmode=allow may fall back to plaintext'],
    ['postgres://u@db/x?sslcert=/c.crt', 'a client certificate needs both sslcert and sslkey (got only sslcert)'],
    ['postgres://u@db/x?sslkey=/c.key', 'a client certificate needs both sslcert and sslkey (got only sslkey)'],
    ['postgres://u@db/x?sslmode=disable&sslcert=/c&sslkey=/k', 'sslcert is set but sslmode=disable sends no certificate'],
    ['postgres://u@db/x?sslmode=require&sslrootcert=system', 'sslrootcert=system needs sslmode=verify-full'],
    ['postgres://u@db/x?sslcrl=/crl.pem', 'sslcrl is not supported by intake-sync'],
    ['postgres://u@h1,h2/x', 'several hosts in one URL are not supported'],
  ])('refuses %s', (url, message) => {
    expect(problem(url)).toContain(message);
  });

  it('the URL handed to postgres.js keeps everything but the TLS parameters (which it would send as settings)', () => {
    expect(
      urlWithoutTlsParameters('postgres://u:p@db:5432/x?sslmode=verify-full&sslrootcert=/ca.pem&sslcert=/c&sslkey=/k&application_name=app'),
    ).toBe('postgres://u:p@db:5432/x?application_name=app');
  });

  it('warns for require and for plaintext off loopback, never for a verified or loopback connection', () => {
    expect(tlsWarning(settings('postgres://u@db.internal/x?sslmode=require'))).toContain('does not verify the server (db.internal)');
    expect(tlsWarning(settings('postgres://u@db.internal/x?sslmode=disable'))).toContain('plaintext to db.internal');
    expect(tlsWarning(settings('postgres://u@db.internal/x'))).toBeUndefined();
    expect(tlsWarning(settings('postgres://u@127.0.0.1/x'))).toBeUndefined();
  });
});

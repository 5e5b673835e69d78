import { describe, expect, it } from 'vitest';
import { databaseTlsWarnings, describeDatabaseTls } from '../../src/daemon/database-tls.js';
import { loadConfig } from '../../src/config/config.js';

describe('the configuration refuses TLS settings it cannot honour, naming the variable', () => {
  it.each([
    [{ DATABASE_URL: 'postgres://u@db.internal/x?sslmode=bogus' }, 'DATABASE_URL: sslmode=bogus is not one of'],
    [
      { DATABASE_URL: 'postgres://u@db.internal/x', LEASE_DATABASE_URL: 'postgres://u@db.internal/x?sslmode=prefer' },
      'LEASE_DATABASE_URL: sslmode=prefer may fall back to plaintext',
    ],
  ])('%o', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('describes both connections for the start line, and warns for require', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u@db.internal/x?sslmode=require',
      LEASE_DATABASE_URL: 'postgres://u@db.internal:5433/x',
      DATABASE_CA_FILE: '/etc/ca.pem',
    });
    expect(describeDatabaseTls(config)).toBe('encrypted, not verified (require); lease verified (verify-full)');
    expect(databaseTlsWarnings(config)).toEqual([expect.stringContaining('DATABASE_URL: sslmode=require encrypts but does not verify')]);
    expect(describeDatabaseTls(loadConfig({}))).toBe('embedded PGlite');
    expect(describeDatabaseTls(loadConfig({ DATABASE_URL: 'postgres://u@127.0.0.1/x' }))).toBe('plaintext (loopback)');
  });
});

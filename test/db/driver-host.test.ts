import { describe, expect, it } from 'vitest';
import { driverHost, isLoopbackHost } from '../../src/db/driver-host.js';
import { tlsSettingsFor, urlWithoutTlsParameters } from '../../src/db/tls.js';
import { databaseTarget } from '../../src/db/url-target.js';

// The TLS default must be decided on the host libpq and postgres.js really connect to, not on the
// URL's authority alone: an empty authority is not a local socket when PGHOST names a server.
describe('driverHost: the host the driver connects to', () => {
  it.each([
    // url, PGHOST, host, source, loopback
    ['postgres://u@db.example.com/x', undefined, 'db.example.com', 'url', false],
    ['postgres://u@db.example.com/x', '/var/run/postgresql', 'db.example.com', 'url', false],
    ['postgres://u@127.0.0.1/x', 'db.example.com', '127.0.0.1', 'url', true],
    ['postgres://u@[::1]:5432/x', undefined, '::1', 'url', true],
    ['postgres:///x', undefined, 'localhost', 'default', true],
    ['postgres:///x', '', 'localhost', 'default', true],
    ['postgres:///x', 'db.example.com', 'db.example.com', 'PGHOST', false],
    ['postgresql:///x', '10.0.0.5', '10.0.0.5', 'PGHOST', false],
    ['postgres:///x', '/var/run/postgresql', '/var/run/postgresql', 'PGHOST', true],
    ['postgres:///x', '127.0.0.2', '127.0.0.2', 'PGHOST', true],
    ['postgres:///x?host=/var/run/postgresql', 'db.example.com', '/var/run/postgresql', 'host parameter', true],
    ['postgres:///x?host=%2Ftmp', undefined, '/tmp', 'host parameter', true],
    ['postgres:///x?host=db.example.com', undefined, 'db.example.com', 'host parameter', false],
    ['postgres:///x?host=db.example.com', 'localhost', 'db.example.com', 'host parameter', false],
    ['postgres:///x?host=', 'db.example.com', 'db.example.com', 'PGHOST', false],
    ['postgres://u@db.localhost/x', 'db.example.com', 'db.localhost', 'url', true],
    ['postgres://u@127.0.0.1.example.com/x', undefined, '127.0.0.1.example.com', 'url', false],
  ] as const)('%s with PGHOST=%s -> %s (%s)', (url, pgHost, host, source, loopback) => {
    const target = driverHost(new URL(url), pgHost);
    expect(target).toMatchObject({ host, source });
    expect(isLoopbackHost(target)).toBe(loopback);
  });
});

describe('tlsSettingsFor follows the driver host', () => {
  const settings = (url: string, pgHost: string | undefined) => {
    const result = tlsSettingsFor(url, { variable: 'DATABASE_URL', pgHost });
    if ('problem' in result) throw new Error(result.problem);
    return result.settings;
  };

  it.each([
    ['postgres:///vendor', 'db.example.com', 'verify-full', 'db.example.com', false],
    ['postgres:///vendor?sslrootcert=/ca.pem', 'db.example.com', 'verify-full', 'db.example.com', false],
    ['postgres:///vendor', '/var/run/postgresql', 'disable', '/var/run/postgresql', true],
    ['postgres:///vendor', undefined, 'disable', 'localhost', true],
    ['postgres:///vendor?host=db.example.com', undefined, 'verify-full', 'db.example.com', false],
    ['postgres:///vendor?host=/var/run/postgresql', 'db.example.com', 'disable', '/var/run/postgresql', true],
    ['postgres://u@localhost/vendor', 'db.example.com', 'disable', 'localhost', true],
  ] as const)('%s with PGHOST=%s -> %s for %s', (url, pgHost, mode, host, loopback) => {
    expect(settings(url, pgHost)).toMatchObject({ mode, host, loopback });
  });

  it('refuses prefer and several hosts wherever the host came from', () => {
    const problem = (url: string, pgHost: string | undefined) => {
      const result = tlsSettingsFor(url, { variable: 'DATABASE_URL', pgHost });
      return 'problem' in result ? result.problem : undefined;
    };
    expect(problem('postgres:///vendor?sslmode=prefer', 'db.example.com')).toContain('not on loopback (db.example.com)');
    expect(problem('postgres:///vendor?sslmode=prefer', undefined)).toBeUndefined();
    expect(problem('postgres:///vendor', 'h1,h2')).toContain('several hosts in PGHOST are not supported');
    expect(problem('postgres:///vendor?host=h1,h2', undefined)).toContain('several hosts in the host= parameter are not supported');
    expect(problem('postgres://u@db/vendor?hostaddr=10.0.0.1', undefined)).toContain('hostaddr is not supported');
  });

  it('hands postgres.js a URL without host= (it would send it to the server as a setting)', () => {
    expect(urlWithoutTlsParameters('postgres:///vendor?host=%2Fvar%2Frun%2Fpostgresql&application_name=a')).toBe(
      'postgres:///vendor?application_name=a',
    );
  });

  it('names the same host in messages (databaseTarget)', () => {
    expect(databaseTarget('postgres:///vendor', 'db.example.com').address).toBe('db.example.com:5432');
    expect(databaseTarget('postgres:///vendor?host=/tmp', 'db.example.com').address).toBe('/tmp:5432');
    expect(databaseTarget('postgres:///vendor', undefined).address).toBe('localhost:5432');
  });
});

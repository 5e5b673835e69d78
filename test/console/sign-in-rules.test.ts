import { describe, expect, test } from 'vitest';
import { addressKey, clientAddress } from '../../src/console/client-address.js';
import { needsSecureCookies } from '../../src/console/compose.js';
import { sessionCookieName, signInNotice } from '../../src/console/pages/sign-in.js';
import { trustAuthMessage } from '../../src/console/password-auth-check.js';
import { returnPathFor, safeReturnPath } from '../../src/console/return-path.js';
import { type RoleFacts, refusalReason } from '../../src/console/role-eligibility.js';
import { parseTrustedProxies } from '../../src/console/sso/trusted-proxies.js';
import { databaseTarget } from '../../src/console/user-connection.js';

const proxies = parseTrustedProxies('127.0.0.1, 10.1.0.0/16, fd00:1::/48');

describe('clientAddress: X-Forwarded-For only from a trusted proxy', () => {
  test.each([
    ['an untrusted peer: its header is ignored', '192.0.2.7', '198.51.100.1', '192.0.2.7'],
    ['a trusted peer: the right-most untrusted entry', '127.0.0.1', '198.51.100.1, 203.0.113.9', '203.0.113.9'],
    ['proxies chained: trusted hops skipped', '127.0.0.1', '203.0.113.9, 10.1.2.3', '203.0.113.9'],
    ['a forged left part does not choose', '127.0.0.1', 'evil, 203.0.113.9', '203.0.113.9'],
    ['a malformed last entry: the proxy itself', '127.0.0.1', '203.0.113.9, not-an-ip', '127.0.0.1'],
    ['a trusted peer without the header', '127.0.0.1', undefined, '127.0.0.1'],
    ['IPv4-mapped peer', '::ffff:127.0.0.1', '2001:db8:a:b:1::5', '2001:db8:a:b:1::5'],
    ['bracketed IPv6 entry', '127.0.0.1', '[2001:db8::1]', '2001:db8::1'],
    ['every hop trusted: the left-most', '127.0.0.1', '10.1.0.5', '10.1.0.5'],
  ])('%s', (_name, peer, xff, client) => {
    expect(clientAddress(peer, xff, proxies)).toBe(client);
  });
  test('no proxy list: always the socket', () => {
    expect(clientAddress('127.0.0.1', '203.0.113.9', undefined)).toBe('127.0.0.1');
  });
});

describe('addressKey: IPv6 grouped by /64', () => {
  test.each([
    ['203.0.113.9', '203.0.113.9'],
    ['2001:db8:a:b:1::5', '2001:db8:a:b::/64'],
    ['2001:db8:a:b:ffff:ffff:ffff:ffff', '2001:db8:a:b::/64'],
    ['2001:DB8:0A:000B::1', '2001:db8:a:b::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
  ])('%s -> %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });
});

const staff: RoleFacts = {
  role: 'alice',
  loginRole: 'alice',
  superuser: false,
  bypassRls: false,
  createRole: false,
  createDb: false,
  schemaOwner: false,
  runtime: false,
  feeds: ['clinic_a'],
};

describe('refusalReason: only the roles the console is for', () => {
  test.each([
    ['a staff role with a feed', {}, undefined],
    ['a role that sees every feed', { feeds: null }, undefined],
    ['superuser', { superuser: true }, /superuser/],
    ['BYPASSRLS', { bypassRls: true }, /BYPASSRLS/],
    ['CREATEROLE', { createRole: true }, /CREATEROLE/],
    ['CREATEDB', { createDb: true }, /CREATEDB/],
    ['schema owner', { schemaOwner: true }, /owns the deployment's schema/],
    ['runtime', { runtime: true }, /runtime role/],
    ["DATABASE_URL's role", { role: 'intake_runtime', loginRole: 'intake_runtime' }, /DATABASE_URL's role/],
    ["DATABASE_URL's role as the SSO login role", { loginRole: 'intake_runtime' }, /DATABASE_URL's role/],
    ['no feed', { feeds: [] }, /may see no feed/],
  ] as const)('%s', (_name, facts, reason) => {
    const got = refusalReason({ ...staff, ...facts }, 'intake_runtime');
    if (reason === undefined) expect(got).toBeUndefined();
    else {
      expect(got).toMatch(reason);
      expect(got).not.toContain('\n');
    }
  });
});

describe('return paths after sign-in', () => {
  test.each([
    ['GET', '/quarantine', '?feed=clinic_a&reason=unmatched', '/quarantine?feed=clinic_a&reason=unmatched'],
    ['GET', '/', '', undefined],
    ['POST', '/quarantine/clinic_a/evt-a1/dismiss', '', '/quarantine/clinic_a/evt-a1'],
    ['POST', '/quarantine/clinic_a/evt-a1/resolve', '', '/quarantine/clinic_a/evt-a1'],
    ['POST', '/quarantine/dismiss-all', '', '/quarantine'],
    ['POST', '/sign-out', '', undefined],
    ['GET', '/sign-in', '', undefined],
  ])('%s %s%s -> %s', (method, path, query, next) => {
    expect(returnPathFor(method, path, query)).toBe(next);
  });
  test.each(['//evil.example/', 'https://evil.example/', '/\\evil.example', '/a\nb', 'x', '', `/${'a'.repeat(600)}`, '/sign-in?next=/'])(
    'refuses %j',
    (value) => {
      expect(safeReturnPath(value)).toBeUndefined();
    },
  );
});

describe('cookies and notices', () => {
  test.each([
    ['127.0.0.1', undefined, false],
    ['127.0.0.1', 'http://localhost:8081', false],
    ['127.0.0.1', 'https://console.example.org', true],
    ['::1', 'HTTPS://console.example.org', true],
    ['0.0.0.0', undefined, true],
  ])('host %s, CONSOLE_PUBLIC_URL %s: Secure %s', (host, url, secure) => {
    expect(needsSecureCookies(host, url)).toBe(secure);
    expect(sessionCookieName(secure)).toBe(secure ? '__Host-console_session' : 'console_session');
  });
  test.each([
    ['idle', false, /period without activity\.$/],
    ['lifetime', false, /maximum length/],
    ['idle', true, /period without activity\. Nothing was changed/],
    [undefined, true, /^You are not signed in\. Nothing was changed/],
  ])('notice %s unsaved=%s', (ended, unsaved, text) => {
    expect(signInNotice(ended, unsaved)).toMatch(text);
  });
  test('no notice for a plain visit', () => {
    expect(signInNotice(undefined, false)).toBeUndefined();
  });
});

describe("the console keeps only DATABASE_URL's host, port and database", () => {
  test('user, password, client certificate and other parameters are dropped; the user name is kept apart', () => {
    const t = databaseTarget(
      'postgres://intake_runtime:s3cret@db.internal:5433/vendor?sslmode=verify-full&sslrootcert=/ca.pem&sslcert=/c.pem&sslkey=/k.pem&options=-c%20x%3Dy&application_name=a',
      'intake_sync',
    );
    expect(t.url).toBe('postgres://db.internal:5433/vendor?sslmode=verify-full&sslrootcert=%2Fca.pem');
    expect(t.urlRole).toBe('intake_runtime');
    expect(JSON.stringify(t)).not.toContain('s3cret');
  });
});

describe('trustAuthMessage names the line to change', () => {
  test('from pg_hba_file_rules', () => {
    const message = trustAuthMessage(
      {
        asksPassword: false,
        client: '127.0.0.1',
        rules: [
          { line_number: 90, type: 'local', database: 'all', user_name: 'all', address: null, netmask: null, auth_method: 'trust' },
          {
            line_number: 92,
            type: 'host',
            database: 'all',
            user_name: 'all',
            address: '127.0.0.1',
            netmask: '255.255.255.255',
            auth_method: 'trust',
          },
          {
            line_number: 94,
            type: 'host',
            database: 'all',
            user_name: 'all',
            address: '::1',
            netmask: null,
            auth_method: 'scram-sha-256',
          },
        ],
      },
      'vendor',
      'intake_runtime',
    );
    expect(message).toContain('pg_hba.conf line 92 (host all all 127.0.0.1 255.255.255.255 trust)');
    expect(message).not.toContain('line 94');
    expect(message).toContain('scram-sha-256');
    expect(message).toContain('CONSOLE_ALLOW_TRUST_AUTH=local-development');
  });
  test('without pg_hba_file_rules: the address, database and user', () => {
    const message = trustAuthMessage({ asksPassword: false, client: '10.1.2.3', rules: undefined }, 'vendor', 'intake_runtime');
    expect(message).toContain('the pg_hba.conf line matching address 10.1.2.3, database vendor, user intake_runtime');
  });
});

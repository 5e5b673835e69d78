import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { normalizeIdentity, parseRoleMap, ROLE_MAP_MAX_BYTES } from '../../src/console/sso/role-map.js';
import { ssoSettings, trustedProxiesSetting } from '../../src/console/sso/settings.js';
import { isTrustedPeer, parseTrustedProxies } from '../../src/console/sso/trusted-proxies.js';

const dir = mkdtempSync(join(tmpdir(), 'sso-settings-'));
const mapFile = join(dir, 'roles.map');
writeFileSync(mapFile, 'alice@x.example = role_a\n');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('CONSOLE_TRUSTED_PROXIES', () => {
  test('IPv4 and IPv6 addresses and CIDRs; IPv4-mapped peers count as IPv4', () => {
    const list = parseTrustedProxies('10.2.0.0/16, 192.168.1.7, fd12::/48, ::1');
    expect(isTrustedPeer(list, '10.2.3.4')).toBe(true);
    expect(isTrustedPeer(list, '::ffff:10.2.3.4')).toBe(true);
    expect(isTrustedPeer(list, '192.168.1.7')).toBe(true);
    expect(isTrustedPeer(list, '192.168.1.8')).toBe(false);
    expect(isTrustedPeer(list, 'fd12::1')).toBe(true);
    expect(isTrustedPeer(list, 'fd13::1')).toBe(false);
    expect(isTrustedPeer(list, '10.3.0.1')).toBe(false);
    expect(isTrustedPeer(list, '::1')).toBe(true);
    expect(isTrustedPeer(list, '2001:db8::1')).toBe(false);
    expect(isTrustedPeer(list, undefined)).toBe(false);
  });
  test.each([
    ['0.0.0.0/0', /"0\.0\.0\.0\/0" is wider than \/16/],
    ['::/0', /"::\/0" is wider than \/48/],
    ['10.0.0.0/8', /wider than \/16/],
    ['127.0.0.1, 10.0.0.0/15', /"10\.0\.0\.0\/15" is wider/],
    ['fd00::/47', /wider than \/48/],
    ['::ffff:0:0/96', /wider than \/16/],
  ])('refuses the over-wide %j naming the setting and the widest range allowed', (value, message) => {
    expect(() => parseTrustedProxies(value)).toThrow(/^CONSOLE_TRUSTED_PROXIES: /);
    expect(() => parseTrustedProxies(value)).toThrow(message);
  });
  test('the widest accepted: a /16 of IPv4 and a /48 of IPv6', () => {
    expect(isTrustedPeer(parseTrustedProxies('10.244.0.0/16, 2001:db8:1::/48'), '10.244.9.9')).toBe(true);
  });
  test.each(['', ' , ', '10.0.0.300', '10.0.0.0/33', 'fd00::/129', 'proxy.local', '10.0.0.0/8/1', '10.0.0.0/x'])(
    'refuses %j naming the setting',
    (value) => {
      expect(() => parseTrustedProxies(value)).toThrow(/^CONSOLE_TRUSTED_PROXIES: /);
    },
  );
});

describe('CONSOLE_ROLE_MAP_FILE', () => {
  test('identity = role lines, comments, case-insensitive identities', () => {
    const map = parseRoleMap('# staff\n\nAlice@X.example = role_a\n bob = role_b \n');
    expect([...map]).toEqual([
      ['alice@x.example', 'role_a'],
      ['bob', 'role_b'],
    ]);
    expect(normalizeIdentity(' ALICE@x.example ')).toBe('alice@x.example');
    expect(normalizeIdentity('a b')).toBeUndefined();
    expect(normalizeIdentity('x'.repeat(129))).toBeUndefined();
  });
  test.each([
    ['no equals', 'alice role_a', /line 1: must be "identity = role"/],
    ['bad role', 'alice = "role a"', /line 1: the role must be/],
    ['bad identity', 'al ice = role_a', /line 1: the identity/],
    ['duplicate', 'a = r1\nA = r2', /line 2: this identity is mapped twice/],
    ['empty', '# nothing\n', /maps no identity/],
  ])('%s is refused naming the setting and the line, not the identity', (_name, text, message) => {
    expect(() => parseRoleMap(text)).toThrow(message);
    expect(() => parseRoleMap(text)).toThrow(/^CONSOLE_ROLE_MAP_FILE: /);
  });
});

describe('the SSO mode fails closed at startup, naming the setting', () => {
  const ok = {
    CONSOLE_TRUSTED_HEADER: 'X-Forwarded-Email',
    CONSOLE_TRUSTED_PROXIES: '127.0.0.1',
    CONSOLE_ROLE_MAP_FILE: mapFile,
    CONSOLE_LOGIN_ROLE: 'console_login',
  };
  test('unset header: password mode; a valid set: the SSO mode', () => {
    expect(ssoSettings({})).toBeUndefined();
    const s = ssoSettings(ok);
    expect(s?.header).toBe('x-forwarded-email');
    expect(s?.roleMap.get('alice@x.example')).toBe('role_a');
  });
  test.each([
    [{ ...ok, CONSOLE_TRUSTED_PROXIES: undefined }, /^CONSOLE_TRUSTED_PROXIES: required/],
    [{ ...ok, CONSOLE_TRUSTED_PROXIES: 'everyone' }, /^CONSOLE_TRUSTED_PROXIES: /],
    [{ ...ok, CONSOLE_ROLE_MAP_FILE: undefined }, /^CONSOLE_ROLE_MAP_FILE: required/],
    [{ ...ok, CONSOLE_ROLE_MAP_FILE: join(dir, 'missing.map') }, /^CONSOLE_ROLE_MAP_FILE: cannot read .* \(ENOENT\)/],
    [{ ...ok, CONSOLE_LOGIN_ROLE: undefined }, /^CONSOLE_LOGIN_ROLE: required/],
    [{ ...ok, CONSOLE_TRUSTED_HEADER: 'X Bad' }, /^CONSOLE_TRUSTED_HEADER: must be a header name/],
    [{ ...ok, CONSOLE_TRUSTED_HEADER: 'Authorization' }, /^CONSOLE_TRUSTED_HEADER: must be the identity header/],
    [{ CONSOLE_ROLE_MAP_FILE: mapFile }, /^CONSOLE_ROLE_MAP_FILE: set without CONSOLE_TRUSTED_HEADER/],
  ])('%j', (env, message) => {
    expect(() => ssoSettings(env)).toThrow(message);
  });
  test('CONSOLE_TRUSTED_PROXIES alone is the password mode: its proxies name the client by X-Forwarded-For', () => {
    expect(ssoSettings({ CONSOLE_TRUSTED_PROXIES: '127.0.0.1' })).toBeUndefined();
    const proxies = trustedProxiesSetting({ CONSOLE_TRUSTED_PROXIES: '127.0.0.1' });
    expect(proxies && isTrustedPeer(proxies, '127.0.0.1')).toBe(true);
    expect(trustedProxiesSetting({})).toBeUndefined();
    expect(() => trustedProxiesSetting({ CONSOLE_TRUSTED_PROXIES: '0.0.0.0/0' })).toThrow(/^CONSOLE_TRUSTED_PROXIES: .*wider/);
  });
  test('a map file over the size bound is refused', () => {
    const big = join(dir, 'big.map');
    writeFileSync(big, `${'#'.repeat(ROLE_MAP_MAX_BYTES)}\na = r\n`);
    expect(() => ssoSettings({ ...ok, CONSOLE_ROLE_MAP_FILE: big })).toThrow(/^CONSOLE_ROLE_MAP_FILE: .* larger than/);
  });
});

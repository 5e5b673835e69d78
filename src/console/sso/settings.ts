import type { BlockList } from 'node:net';
import { isPlainRoleName } from '../../db/grants.js';
import { loadRoleMap } from './role-map.js';
import { parseTrustedProxies } from './trusted-proxies.js';

/** The trusted-header (SSO) sign-in mode, validated (docs/console.md#sign-in-through-a-proxy-sso). */
export interface SsoSettings {
  /** the header the proxy sets, lower case (e.g. x-forwarded-email) */
  header: string;
  proxies: BlockList;
  roleMap: ReadonlyMap<string, string>;
  /** the console's own login role: a member of every mapped role, never DATABASE_URL's */
  loginRole: string;
  loginPassword?: string | undefined;
}

export interface SsoEnv {
  CONSOLE_TRUSTED_HEADER?: string | undefined;
  CONSOLE_TRUSTED_PROXIES?: string | undefined;
  CONSOLE_ROLE_MAP_FILE?: string | undefined;
  CONSOLE_LOGIN_ROLE?: string | undefined;
  CONSOLE_LOGIN_PASSWORD?: string | undefined;
}

/**
 * The SSO mode's settings, or undefined when CONSOLE_TRUSTED_HEADER is unset (password mode).
 * Fails closed: a map file or login role without the header, or the header without any of them
 * or without a proxy list, throws naming the setting; the two modes never run together.
 */
export function ssoSettings(env: SsoEnv): SsoSettings | undefined {
  const header = env.CONSOLE_TRUSTED_HEADER?.trim();
  if (!header) {
    // CONSOLE_TRUSTED_PROXIES alone is the password mode's proxy list (whose X-Forwarded-For is read)
    for (const name of ['CONSOLE_ROLE_MAP_FILE', 'CONSOLE_LOGIN_ROLE', 'CONSOLE_LOGIN_PASSWORD'] as const) {
      if (env[name]) throw new Error(`${name}: set without CONSOLE_TRUSTED_HEADER (the proxy sign-in mode needs both)`);
    }
    return undefined;
  }
  if (!/^[A-Za-z0-9-]{1,64}$/.test(header)) throw new Error('CONSOLE_TRUSTED_HEADER: must be a header name (1-64 of A-Z a-z 0-9 -)');
  if (/^(host|cookie|authorization|content-.*|x-forwarded-for)$/i.test(header)) {
    throw new Error('CONSOLE_TRUSTED_HEADER: must be the identity header the proxy sets, not a standard one');
  }
  if (!env.CONSOLE_TRUSTED_PROXIES?.trim()) throw new Error('CONSOLE_TRUSTED_PROXIES: required with CONSOLE_TRUSTED_HEADER');
  if (!env.CONSOLE_ROLE_MAP_FILE?.trim()) throw new Error('CONSOLE_ROLE_MAP_FILE: required with CONSOLE_TRUSTED_HEADER');
  const loginRole = env.CONSOLE_LOGIN_ROLE?.trim() ?? '';
  if (!isPlainRoleName(loginRole)) throw new Error('CONSOLE_LOGIN_ROLE: required with CONSOLE_TRUSTED_HEADER (a plain role name)');
  return {
    header: header.toLowerCase(),
    proxies: parseTrustedProxies(env.CONSOLE_TRUSTED_PROXIES),
    roleMap: loadRoleMap(env.CONSOLE_ROLE_MAP_FILE.trim()),
    loginRole,
    loginPassword: env.CONSOLE_LOGIN_PASSWORD || undefined,
  };
}

/** CONSOLE_TRUSTED_PROXIES in either mode: the peers whose X-Forwarded-For names the client; undefined when unset. */
export function trustedProxiesSetting(env: SsoEnv): BlockList | undefined {
  const value = env.CONSOLE_TRUSTED_PROXIES?.trim();
  return value ? parseTrustedProxies(value) : undefined;
}

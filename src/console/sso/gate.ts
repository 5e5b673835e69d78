import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import type { ConsoleEnv } from '../context.js';
import { problemPage } from '../pages/not-found.js';
import { normalizeIdentity } from './role-map.js';
import type { SsoSettings } from './settings.js';
import { isTrustedPeer } from './trusted-proxies.js';

/** What the proxy's request says: the mapped role and identity, or why it is refused. */
export type ProxiedIdentity = { identity: string; role: string } | { refused: string };

/**
 * Who a request is, in SSO mode: only a trusted peer's header counts; a header from any other
 * peer is never read. An unmapped identity gets no role (never a default one). Pure apart from
 * reading the request.
 */
export function proxiedIdentity(c: Context<ConsoleEnv>, sso: SsoSettings): ProxiedIdentity {
  if (!isTrustedPeer(sso.proxies, getConnInfo(c).remote.address)) {
    return { refused: 'This console accepts requests only through its sign-in proxy.' };
  }
  const identity = normalizeIdentity(c.req.header(sso.header));
  if (!identity) return { refused: 'The sign-in proxy sent no identity.' };
  const role = sso.roleMap.get(identity);
  if (!role) return { refused: 'No role mapped: your identity has no database role in this console. Ask an administrator.' };
  return { identity, role };
}

/** The 403 page of a refused proxied request (names no identity: it may be an email). */
export function refusedPage(c: Context<ConsoleEnv>, reason: string) {
  return c.html(problemPage('Forbidden', reason), 403);
}

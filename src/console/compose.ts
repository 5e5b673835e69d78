import type { BlockList } from 'node:net';
import type postgres from 'postgres';
import type { Logger } from '../log/log.js';
import { ConnectionBudget } from './connection-budget.js';
import type { ConsoleDeps } from './context.js';
import { probePasswordAuth, trustAuthMessage } from './password-auth-check.js';
import { SIGN_IN_LIMITS, SignInLimiter } from './rate-limit.js';
import { readRoleFacts, refusalReason } from './role-eligibility.js';
import { isLoopbackHost } from './server.js';
import { type ConsoleSession, SessionStore } from './session-store.js';
import { connectAsMappedRole } from './sso/connect.js';
import type { SsoSettings } from './sso/settings.js';
import { connectAsRole, type DatabaseTarget, databaseTarget } from './user-connection.js';

/** The console's settings, as config.ts parsed them. */
export interface ConsoleSettings {
  databaseUrl: string;
  schema: string;
  caFile?: string | undefined;
  host: string;
  idleTimeoutMs: number;
  /** CONSOLE_SESSION_MAX (default 12 h) */
  sessionMaxMs?: number | undefined;
  /** CONSOLE_PUBLIC_URL */
  publicUrl?: string | undefined;
  /** CONSOLE_MAX_CONNECTIONS (default 10) */
  maxConnections?: number | undefined;
  /** CONSOLE_SESSIONS_PER_ROLE (default 3) */
  sessionsPerRole?: number | undefined;
  /** CONSOLE_TRUSTED_PROXIES (either mode) */
  proxies?: BlockList | undefined;
  /** the trusted-header sign-in mode, when CONSOLE_TRUSTED_HEADER is set (sso/settings.ts) */
  sso?: SsoSettings | undefined;
}

/** Whether cookies must be Secure (and so `__Host-`): an https public URL, or any listener but loopback. Pure. */
export function needsSecureCookies(host: string, publicUrl: string | undefined): boolean {
  return publicUrl?.toLowerCase().startsWith('https:') === true || !isLoopbackHost(host);
}

/** Connection errors that mean the session's credentials no longer sign in (anything else: the database is unreachable). */
const REVOKED_CODES = new Set(['28P01', '28000', '22023', '42704', '42501', 'SSO_ROLE']);

/** Whether a session's role may still use the console: a fresh sign-in with its credentials, then the same checks. */
export async function stillAllowed(
  session: ConsoleSession,
  refusal: (sql: postgres.Sql) => Promise<string | undefined>,
): Promise<boolean | 'unknown'> {
  const reconnect = session.reconnect;
  if (!reconnect) return true;
  let probe: postgres.Sql;
  try {
    probe = await reconnect();
  } catch (error) {
    // 28P01: the password changed; 28000: the role lost LOGIN or was dropped; SSO mode: the mapped role
    // is gone (22023, 42704) or no longer granted to the login role (42501), or was not taken (SSO_ROLE)
    const code = (error as { code?: string }).code ?? '';
    return REVOKED_CODES.has(code) ? false : 'unknown';
  }
  try {
    return (await refusal(probe)) === undefined;
  } catch {
    return 'unknown';
  } finally {
    await probe.end({ timeout: 1 }).catch(() => {});
  }
}

/** Builds the console's collaborators from its settings; `now` is injected (tests move it). */
export function composeConsole(settings: ConsoleSettings, log: Logger, now: () => number = Date.now): ConsoleDeps {
  const target = databaseTarget(settings.databaseUrl, settings.schema, settings.caFile);
  // one backend is kept for the session check, which runs one probe at a time
  const budget = new ConnectionBudget((settings.maxConnections ?? 10) - 1);
  const store = new SessionStore(
    {
      idleTimeoutMs: settings.idleTimeoutMs,
      maxLifetimeMs: settings.sessionMaxMs ?? 12 * 3_600_000,
      perRole: settings.sessionsPerRole ?? 3,
      total: budget.max,
    },
    now,
    () => budget.release(),
  );
  const refusal = async (sql: postgres.Sql) => refusalReason(await readRoleFacts(sql, target.schema), target.urlRole);
  return {
    store,
    limiter: new SignInLimiter(SIGN_IN_LIMITS, now),
    budget,
    target,
    secureCookies: needsSecureCookies(settings.host, settings.publicUrl),
    proxies: settings.proxies ?? settings.sso?.proxies,
    now,
    log,
    connect: (role, password) => connectAsRole(target, role, password),
    refusal,
    async checkSessions() {
      const swept = await store.sweep();
      const revoked = await store.revalidate((session) => stillAllowed(session, refusal));
      if (swept + revoked > 0) log.info({ event: 'console.sessions_ended', past_time: swept, revoked }, 'console sessions ended');
    },
    sso: settings.sso && {
      settings: settings.sso,
      connect: (role, actor) => connectAsMappedRole(target, settings.sso as SsoSettings, role, actor),
    },
  };
}

/**
 * Password mode's start check: the server must ask for a password. A random wrong password that
 * signs in as DATABASE_URL's role (or `postgres`) means trust: throws naming the pg_hba.conf line,
 * unless `allowTrust` (CONSOLE_ALLOW_TRUST_AUTH=local-development) on a loopback host, which
 * only warns. SSO mode skips it (no password is typed there).
 */
export async function requirePasswordAuth(
  target: DatabaseTarget,
  options: { host: string; allowTrust: boolean; log: Logger },
): Promise<void> {
  if (options.allowTrust && !isLoopbackHost(options.host)) {
    throw new Error('CONSOLE_ALLOW_TRUST_AUTH: local development only, so CONSOLE_HOST must be loopback (127.0.0.1, ::1, localhost)');
  }
  const user = target.urlRole ?? 'postgres';
  const probe = await probePasswordAuth((role, password) => connectAsRole(target, role, password), user);
  if (probe.asksPassword) return;
  const database = decodeURIComponent(new URL(target.url).pathname.slice(1)) || user;
  const message = trustAuthMessage(probe, database, user);
  if (!options.allowTrust) throw new Error(message);
  options.log.warn({ event: 'console.trust_auth_allowed' }, `CONSOLE_ALLOW_TRUST_AUTH=local-development: ${message}`);
}

import type { Context } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { getCookie, setCookie } from 'hono/cookie';
import { isPlainRoleName } from '../../db/grants.js';
import { addressKey, clientAddress } from '../client-address.js';
import type { ConsoleDeps, ConsoleEnv } from '../context.js';
import { CSRF_FIELD, csrfTokenMatches } from '../csrf.js';
import { html } from '../html.js';
import { layout } from '../layout.js';
import { safeReturnPath } from '../return-path.js';
import { newToken } from '../session-store.js';

/** The session cookie's name: `__Host-` prefixed whenever it is Secure (the browser then binds it to this host and path /). */
export function sessionCookieName(secure: boolean): string {
  return secure ? '__Host-console_session' : 'console_session';
}
/** The sign-in form's CSRF token (double submit: this cookie and the form field must be equal); `__Secure-` when Secure (its path is /sign-in). */
export function signInCsrfCookieName(secure: boolean): string {
  return secure ? '__Secure-console_sign_in' : 'console_sign_in';
}

/** The form field and query parameter carrying the page to return to after sign-in. */
export const NEXT_FIELD = 'next';

/** The notice above the form after a session ended, and when an action was not carried out. Pure. */
export function signInNotice(ended: string | undefined, unsaved: boolean): string | undefined {
  const why =
    ended === 'idle'
      ? 'You were signed out after a period without activity.'
      : ended === 'lifetime'
        ? 'Your session reached its maximum length (CONSOLE_SESSION_MAX) and was signed out.'
        : undefined;
  if (!unsaved) return why;
  return `${why ?? 'You are not signed in.'} Nothing was changed: sign in and you return to the page, to do it again.`;
}

/** The sign-in form. */
export function signInPage(csrf: string, message?: string, next?: string): string {
  const body = html`${message ? html`<p class="error" role="alert">${message}</p>` : ''}
<form method="post" action="/sign-in" class="signin">
  <input type="hidden" name="${CSRF_FIELD}" value="${csrf}">${next ? html`<input type="hidden" name="${NEXT_FIELD}" value="${next}">` : ''}
  <label for="role">Role<input id="role" name="role" autocomplete="username" required maxlength="63"></label>
  <label for="password">Password<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"></label>
  <button type="submit">Sign in</button>
</form>
<p>Sign in with your PostgreSQL role: every page shows what that role may see, and every action runs as it.</p>`;
  return layout({ title: 'Sign in', body }).text;
}

/** Sets the session cookie: HttpOnly, SameSite=Strict, Path=/, no Domain; `__Host-` and Secure when secure. */
export function setSessionCookie(c: Context<ConsoleEnv>, deps: ConsoleDeps, id: string): void {
  setCookie(c, sessionCookieName(deps.secureCookies), id, { httpOnly: true, secure: deps.secureCookies, sameSite: 'Strict', path: '/' });
}

/** GET /sign-in: a fresh double-submit token in a cookie and the form. */
export function showSignIn(c: Context<ConsoleEnv>, deps: ConsoleDeps, message?: string) {
  // the browser's own requests (a favicon redirected here) must not replace the token of an open form
  const name = signInCsrfCookieName(deps.secureCookies);
  const existing = getCookie(c, name);
  const token = existing && /^[A-Za-z0-9_-]{43}$/.test(existing) ? existing : newToken();
  setCookie(c, name, token, { httpOnly: true, secure: deps.secureCookies, sameSite: 'Strict', path: '/sign-in' });
  return c.html(signInPage(token, message, safeReturnPath(c.req.query(NEXT_FIELD))), 200);
}

/** The client's address for limits and logs: X-Forwarded-For only from a trusted proxy. */
export function requestClient(c: Context<ConsoleEnv>, deps: ConsoleDeps): string {
  return clientAddress(getConnInfo(c).remote.address, c.req.header('x-forwarded-for'), deps.proxies);
}

/**
 * POST /sign-in: checks the token, reserves an attempt (sign-in-limits), takes a connection slot,
 * connects as the role, refuses a role the console is not for, starts the session.
 */
export async function handleSignIn(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const form = await c.req.parseBody();
  const csrfName = signInCsrfCookieName(deps.secureCookies);
  if (!csrfTokenMatches(getCookie(c, csrfName), form[CSRF_FIELD])) return c.text('Forbidden: missing or bad CSRF token', 403);
  const role = typeof form.role === 'string' ? form.role.trim() : '';
  const password = typeof form.password === 'string' ? form.password : '';
  const next = safeReturnPath(form[NEXT_FIELD]);
  const retry = (message: string, status: 400 | 401 | 403 | 429 | 503) => {
    const token = newToken();
    setCookie(c, csrfName, token, { httpOnly: true, secure: deps.secureCookies, sameSite: 'Strict', path: '/sign-in' });
    return c.html(signInPage(token, message, next), status);
  };
  if (!isPlainRoleName(role) || password === '' || password.length > 1024) {
    return retry('Role: a PostgreSQL role name (letters, digits, _ $ -); Password: required.', 400);
  }
  const client = requestClient(c, deps);
  const ticket = deps.limiter.reserve(addressKey(client), role);
  if ('limited' in ticket) {
    deps.log.warn({ event: 'console.sign_in.limited', client, role, limit: ticket.limited }, 'console sign-in refused: too many attempts');
    c.header('Retry-After', String(Math.ceil(ticket.retryAfterMs / 1000)));
    return ticket.limited === 'address'
      ? retry('Too many sign-in attempts from this address: wait a few minutes and try again.', 429)
      : retry('This role has had many failed sign-ins: wait a little and try again.', 429);
  }
  let failed = true;
  try {
    if (!deps.budget.tryAcquire()) {
      failed = false;
      deps.log.warn({ event: 'console.sign_in.busy', client, role }, 'console sign-in refused: CONSOLE_MAX_CONNECTIONS reached');
      return retry('The console is at its connection limit; try again in a minute.', 503);
    }
    let sql: import('postgres').Sql;
    try {
      sql = await deps.connect(role, password);
    } catch (error) {
      deps.budget.release();
      deps.log.warn({ event: 'console.sign_in.failed', client, role, code: (error as { code?: string }).code }, 'console sign-in failed');
      return retry('Sign-in failed: the role or the password is wrong, or the database refused the connection.', 401);
    }
    const refused = await deps.refusal(sql).catch((error: unknown) => {
      deps.log.error(
        { event: 'console.sign_in.check_failed', client, role, code: (error as { code?: string }).code },
        'console role check failed',
      );
      return 'The console could not check this role: try again.';
    });
    if (refused) {
      await sql.end({ timeout: 1 }).catch(() => {});
      deps.budget.release();
      deps.log.warn({ event: 'console.sign_in.refused', client, role, reason: refused }, 'console sign-in refused for this role');
      return retry(`Sign-in refused: ${refused}`, 403);
    }
    failed = false;
    const session = deps.store.create(role, sql, { reconnect: () => deps.connect(role, password) });
    if (typeof session === 'string') {
      await sql.end({ timeout: 1 }).catch(() => {});
      deps.budget.release();
      deps.log.warn({ event: 'console.sign_in.busy', client, role, limit: session }, 'console sign-in refused: session limit');
      return session === 'role-full'
        ? retry('This role has as many open sessions as it may (CONSOLE_SESSIONS_PER_ROLE): sign out elsewhere first.', 429)
        : retry('The console has too many open sessions; try again later.', 503);
    }
    deps.log.info({ event: 'console.sign_in', client, role }, 'console sign-in');
    setSessionCookie(c, deps, session.id);
    return c.redirect(next ?? '/', 303);
  } finally {
    if (failed) ticket.failed();
    else ticket.succeeded();
  }
}

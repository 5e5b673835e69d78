import type { Context } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { getCookie, setCookie } from 'hono/cookie';
import { isPlainRoleName } from '../../db/grants.js';
import type { ConsoleDeps, ConsoleEnv } from '../context.js';
import { CSRF_FIELD, csrfTokenMatches } from '../csrf.js';
import { html } from '../html.js';
import { layout } from '../layout.js';
import { newToken } from '../session-store.js';

export const SESSION_COOKIE = 'console_session';
/** The sign-in form's CSRF token (double submit: this cookie and the form field must be equal). */
export const SIGN_IN_CSRF_COOKIE = 'console_sign_in';

/** The sign-in form. */
export function signInPage(csrf: string, message?: string, status = 200): { body: string; status: 200 | 400 | 401 | 429 | 503 } {
  const body = html`${message ? html`<p class="error" role="alert">${message}</p>` : ''}
<form method="post" action="/sign-in" class="signin">
  <input type="hidden" name="${CSRF_FIELD}" value="${csrf}">
  <label for="role">Role<input id="role" name="role" autocomplete="username" required maxlength="63"></label>
  <label for="password">Password<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024"></label>
  <button type="submit">Sign in</button>
</form>
<p>Sign in with your PostgreSQL role: every page shows what that role may see, and every action runs as it.</p>`;
  return { body: layout({ title: 'Sign in', body }).text, status: status as 200 };
}

/** GET /sign-in: a fresh double-submit token in a cookie and the form. */
export function showSignIn(c: Context<ConsoleEnv>, deps: ConsoleDeps, message?: string) {
  // the browser's own requests (a favicon redirected here) must not replace the token of an open form
  const existing = getCookie(c, SIGN_IN_CSRF_COOKIE);
  const token = existing && /^[A-Za-z0-9_-]{43}$/.test(existing) ? existing : newToken();
  setCookie(c, SIGN_IN_CSRF_COOKIE, token, { httpOnly: true, secure: deps.secureCookies, sameSite: 'Strict', path: '/sign-in' });
  const page = signInPage(token, message);
  return c.html(page.body, page.status);
}

/** POST /sign-in: checks the token and the limits, connects as the role, starts the session. */
export async function handleSignIn(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const form = await c.req.parseBody();
  if (!csrfTokenMatches(getCookie(c, SIGN_IN_CSRF_COOKIE), form[CSRF_FIELD])) return c.text('Forbidden: missing or bad CSRF token', 403);
  const role = typeof form.role === 'string' ? form.role.trim() : '';
  const password = typeof form.password === 'string' ? form.password : '';
  const retry = (message: string, status: 400 | 401 | 429 | 503) => {
    const token = newToken();
    setCookie(c, SIGN_IN_CSRF_COOKIE, token, { httpOnly: true, secure: deps.secureCookies, sameSite: 'Strict', path: '/sign-in' });
    return c.html(signInPage(token, message).body, status);
  };
  if (!isPlainRoleName(role) || password === '' || password.length > 1024) {
    return retry('Role: a PostgreSQL role name (letters, digits, _ $ -); Password: required.', 400);
  }
  const ip = getConnInfo(c).remote.address ?? 'unknown';
  const keys = [`ip:${ip}`, `role:${role}`];
  if (!deps.limiter.allow(keys)) {
    deps.log.warn({ event: 'console.sign_in.limited' }, 'console sign-in refused: too many attempts');
    return retry('Too many sign-in attempts: wait a few minutes and try again.', 429);
  }
  let sql: import('postgres').Sql;
  try {
    sql = await deps.connect(role, password);
  } catch (error) {
    deps.limiter.fail(keys);
    deps.log.info({ event: 'console.sign_in.failed', code: (error as { code?: string }).code }, 'console sign-in failed');
    return retry('Sign-in failed: the role or the password is wrong, or the database refused the connection.', 401);
  }
  const session = deps.store.create(role, sql);
  if (!session) {
    await sql.end({ timeout: 1 }).catch(() => {});
    return retry('The console has too many open sessions; try again later.', 503);
  }
  deps.limiter.reset(`role:${role}`);
  deps.log.info({ event: 'console.sign_in', role }, 'console sign-in');
  setCookie(c, SESSION_COOKIE, session.id, { httpOnly: true, secure: deps.secureCookies, sameSite: 'Strict', path: '/' });
  return c.redirect('/', 303);
}

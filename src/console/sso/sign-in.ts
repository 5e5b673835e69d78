import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { ConsoleDeps, ConsoleEnv } from '../context.js';
import { CSRF_FIELD, csrfTokenMatches } from '../csrf.js';
import { html } from '../html.js';
import { layout } from '../layout.js';
import { SESSION_COOKIE, SIGN_IN_CSRF_COOKIE } from '../pages/sign-in.js';
import { newToken } from '../session-store.js';
import { proxiedIdentity, refusedPage } from './gate.js';
import type { SsoSettings } from './settings.js';

/**
 * GET /sign-in in SSO mode: a **Sign in** button (a POST with a double-submit CSRF token), so a
 * session starts by a deliberate click: after idle logoff or sign-out the proxy's header alone
 * does not sign the user back in.
 */
export function showSsoSignIn(c: Context<ConsoleEnv>, deps: ConsoleDeps, sso: SsoSettings, message?: string) {
  const who = proxiedIdentity(c, sso);
  if ('refused' in who) return refusedPage(c, who.refused);
  const token = newToken();
  setCookie(c, SIGN_IN_CSRF_COOKIE, token, { httpOnly: true, secure: deps.secureCookies, sameSite: 'Strict', path: '/sign-in' });
  const body = html`${message ? html`<p class="error" role="alert">${message}</p>` : ''}
<form method="post" action="/sign-in" class="signin">
  <input type="hidden" name="${CSRF_FIELD}" value="${token}">
  <p>Your sign-in proxy identified you; the console will act as the database role <strong>${who.role}</strong>.</p>
  <button type="submit">Sign in</button>
</form>`;
  return c.html(layout({ title: 'Sign in', body }).text, 200);
}

/** POST /sign-in in SSO mode: the token, then the trusted header's mapped role, then a session for it. */
export async function handleSsoSignIn(c: Context<ConsoleEnv>, deps: ConsoleDeps, sso: NonNullable<ConsoleDeps['sso']>) {
  const form = await c.req.parseBody();
  if (!csrfTokenMatches(getCookie(c, SIGN_IN_CSRF_COOKIE), form[CSRF_FIELD])) return c.text('Forbidden: missing or bad CSRF token', 403);
  const who = proxiedIdentity(c, sso.settings);
  if ('refused' in who) return refusedPage(c, who.refused);
  let sql: import('postgres').Sql;
  try {
    sql = await sso.connect(who.role, who.identity);
  } catch (error) {
    deps.log.warn(
      { event: 'console.sign_in.failed', code: (error as { code?: string }).code, role: who.role },
      'console SSO sign-in failed',
    );
    return c.html(
      layout({
        title: 'Sign in',
        body: html`<p class="error" role="alert">The database refused the console's login role for your mapped role.</p>`,
      }).text,
      503,
    );
  }
  const session = deps.store.create(who.role, sql, who.identity);
  if (!session) {
    await sql.end({ timeout: 1 }).catch(() => {});
    return c.html(
      layout({ title: 'Sign in', body: html`<p class="error" role="alert">The console has too many open sessions; try again later.</p>` })
        .text,
      503,
    );
  }
  deps.log.info({ event: 'console.sign_in', role: who.role, mode: 'trusted_header' }, 'console sign-in');
  setCookie(c, SESSION_COOKIE, session.id, { httpOnly: true, secure: deps.secureCookies, sameSite: 'Strict', path: '/' });
  return c.redirect('/', 303);
}

import type { Context } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { ConsoleDeps, ConsoleEnv } from '../context.js';
import { CSRF_FIELD, csrfTokenMatches } from '../csrf.js';
import { html } from '../html.js';
import { layout } from '../layout.js';
import { NEXT_FIELD, requestClient, setSessionCookie, signInCsrfCookieName } from '../pages/sign-in.js';
import { safeReturnPath } from '../return-path.js';
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
  const next = safeReturnPath(c.req.query(NEXT_FIELD));
  setCookie(c, signInCsrfCookieName(deps.secureCookies), token, {
    httpOnly: true,
    secure: deps.secureCookies,
    sameSite: 'Strict',
    path: '/sign-in',
  });
  const body = html`${message ? html`<p class="error" role="alert">${message}</p>` : ''}
<form method="post" action="/sign-in" class="signin">
  <input type="hidden" name="${CSRF_FIELD}" value="${token}">${next ? html`<input type="hidden" name="${NEXT_FIELD}" value="${next}">` : ''}
  <p>Your sign-in proxy identified you; the console will act as the database role <strong>${who.role}</strong>.</p>
  <button type="submit">Sign in</button>
</form>`;
  return c.html(layout({ title: 'Sign in', body }).text, 200);
}

/** POST /sign-in in SSO mode: the token, then the trusted header's mapped role, then a session for it. */
export async function handleSsoSignIn(c: Context<ConsoleEnv>, deps: ConsoleDeps, sso: NonNullable<ConsoleDeps['sso']>) {
  const form = await c.req.parseBody();
  if (!csrfTokenMatches(getCookie(c, signInCsrfCookieName(deps.secureCookies)), form[CSRF_FIELD]))
    return c.text('Forbidden: missing or bad CSRF token', 403);
  const who = proxiedIdentity(c, sso.settings);
  if ('refused' in who) return refusedPage(c, who.refused);
  const client = requestClient(c, deps);
  const page = (message: string, status: 403 | 429 | 503) =>
    c.html(layout({ title: 'Sign in', body: html`<p class="error" role="alert">${message}</p>` }).text, status);
  if (!deps.budget.tryAcquire()) {
    deps.log.warn({ event: 'console.sign_in.busy', client, role: who.role }, 'console sign-in refused: CONSOLE_MAX_CONNECTIONS reached');
    return page('The console is at its connection limit; try again in a minute.', 503);
  }
  let sql: import('postgres').Sql;
  try {
    sql = await sso.connect(who.role, who.identity);
  } catch (error) {
    deps.budget.release();
    deps.log.warn(
      { event: 'console.sign_in.failed', client, code: (error as { code?: string }).code, role: who.role },
      'console SSO sign-in failed',
    );
    return page("The database refused the console's login role for your mapped role.", 503);
  }
  const refused = await deps.refusal(sql).catch(() => 'The console could not check this role: try again.');
  if (refused) {
    await sql.end({ timeout: 1 }).catch(() => {});
    deps.budget.release();
    deps.log.warn({ event: 'console.sign_in.refused', client, role: who.role, reason: refused }, 'console sign-in refused for this role');
    return page(`Sign-in refused: ${refused}`, 403);
  }
  const session = deps.store.create(who.role, sql, { identity: who.identity, reconnect: () => sso.connect(who.role, who.identity) });
  if (typeof session === 'string') {
    await sql.end({ timeout: 1 }).catch(() => {});
    deps.budget.release();
    return session === 'role-full'
      ? page('Your role has as many open sessions as it may (CONSOLE_SESSIONS_PER_ROLE): sign out elsewhere first.', 429)
      : page('The console has too many open sessions; try again later.', 503);
  }
  deps.log.info({ event: 'console.sign_in', client, role: who.role, mode: 'trusted_header' }, 'console sign-in');
  setSessionCookie(c, deps, session.id);
  return c.redirect(safeReturnPath(form[NEXT_FIELD]) ?? '/', 303);
}

import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, getCookie } from 'hono/cookie';
import { secureHeaders } from 'hono/secure-headers';
import type { ConsoleDeps, ConsoleEnv } from './context.js';
import { CSRF_FIELD, csrfTokenMatches } from './csrf.js';
import { CONSOLE_CSS } from './layout.js';
import { auditPage } from './pages/audit.js';
import { dismissAll, dismissAllPage } from './pages/dismiss-all.js';
import { feedsPage } from './pages/feeds.js';
import { dismissFinding, findingPage, resolveFinding, revealFinding } from './pages/finding.js';
import { notFoundPage, problemPage } from './pages/not-found.js';
import { overduePage } from './pages/overdue.js';
import { prescriptionPage, prescriptionsPage } from './pages/prescriptions.js';
import { quarantinePage } from './pages/quarantine.js';
import { handleSignIn, sessionCookieName, showSignIn, signInNotice } from './pages/sign-in.js';
import { requestSpans } from './request-span.js';
import { returnPathFor } from './return-path.js';
import { proxiedIdentity, refusedPage } from './sso/gate.js';
import { handleSsoSignIn, showSsoSignIn } from './sso/sign-in.js';

/**
 * Every response's security headers, by Hono's secureHeaders: nothing framed, nothing loaded from
 * elsewhere, no script, no referrer. Only the headers the console always sent: HSTS stays the TLS
 * proxy's choice (the console may listen on plain loopback), and the other defaults are off.
 */
const SECURE_HEADERS = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    baseUri: ["'none'"],
  },
  xFrameOptions: 'DENY',
  xContentTypeOptions: true,
  referrerPolicy: 'no-referrer',
  crossOriginOpenerPolicy: 'same-origin',
  crossOriginResourcePolicy: false,
  originAgentCluster: false,
  strictTransportSecurity: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
});

/** Nothing cached: every page is a signed-in role's view (secureHeaders has no cache header, so these stay ours). */
export const NO_STORE_HEADERS: Readonly<Record<string, string>> = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/** The console's routes and controls (docs/console.md). */
export function consoleApp(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  // one server span per request (docs/operations.md, "Tracing"); the no-op span when tracing is off
  app.use('*', requestSpans());
  app.use('*', SECURE_HEADERS);
  app.use('*', async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(NO_STORE_HEADERS)) c.res.headers.set(name, value);
  });
  app.use('*', bodyLimit({ maxSize: 64 * 1024, onError: (c) => c.text('Payload too large', 413) }));
  // liveness for probes: the process answers; no session, no database (docs/console.md)
  app.get('/healthz', (c) => c.text('ok', 200));
  app.get('/console.css', (c) => c.body(CONSOLE_CSS, 200, { 'Content-Type': 'text/css; charset=utf-8' }));
  app.get('/favicon.ico', (c) => c.body(null, 404));
  app.get('/sign-in', (c) => {
    const notice = signInNotice(c.req.query('ended'), c.req.query('unsaved') === '1');
    return deps.sso ? showSsoSignIn(c, deps, deps.sso.settings, notice) : showSignIn(c, deps, notice);
  });
  app.post('/sign-in', (c) => (deps.sso ? handleSsoSignIn(c, deps, deps.sso) : handleSignIn(c, deps)));

  // everything else: a live session, and a matching CSRF token on every POST
  app.use('*', async (c, next) => {
    // SSO mode: every request must come from a trusted proxy with a mapped identity
    const who = deps.sso ? proxiedIdentity(c, deps.sso.settings) : undefined;
    if (who && 'refused' in who) return refusedPage(c, who.refused);
    const cookieName = sessionCookieName(deps.secureCookies);
    const found = await deps.store.use(getCookie(c, cookieName));
    if (who && found !== undefined && !('ended' in found) && found.identity !== who.identity) {
      // another person behind the same browser, or the proxy's user changed: this session is not theirs
      await deps.store.end(found.id);
      deleteCookie(c, cookieName, { path: '/', secure: deps.secureCookies });
      return c.redirect('/sign-in', 303);
    }
    if (found === undefined || 'ended' in found) {
      // to sign-in, with why, that nothing was changed (a POST is never carried out), and where to return
      deleteCookie(c, cookieName, { path: '/', secure: deps.secureCookies });
      const query = new URLSearchParams();
      if (found) query.set('ended', found.ended);
      if (c.req.method === 'POST') query.set('unsaved', '1');
      const url = new URL(c.req.url);
      const next = returnPathFor(c.req.method, url.pathname, url.search);
      if (next) query.set('next', next);
      return c.redirect(query.size > 0 ? `/sign-in?${query}` : '/sign-in', 303);
    }
    if (c.req.method === 'POST') {
      const type = c.req.header('content-type') ?? '';
      const form = /^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(type) ? await c.req.parseBody() : {};
      if (!csrfTokenMatches(found.csrf, form[CSRF_FIELD])) return c.text('Forbidden: missing or bad CSRF token', 403);
    }
    c.set('session', found);
    await next();
  });
  app.post('/sign-out', async (c) => {
    await deps.store.end(c.get('session').id);
    deleteCookie(c, sessionCookieName(deps.secureCookies), { path: '/', secure: deps.secureCookies });
    return c.redirect('/sign-in', 303);
  });
  app.get('/', (c) => feedsPage(c, deps));
  app.get('/quarantine', (c) => quarantinePage(c, deps));
  app.get('/quarantine/dismiss-all', (c) => dismissAllPage(c, deps));
  app.post('/quarantine/dismiss-all', (c) => dismissAll(c, deps));
  app.get('/quarantine/:feed/:key', (c) => findingPage(c, deps));
  app.post('/quarantine/:feed/:key/reveal', (c) => revealFinding(c, deps));
  app.post('/quarantine/:feed/:key/resolve', (c) => resolveFinding(c, deps));
  app.post('/quarantine/:feed/:key/dismiss', (c) => dismissFinding(c, deps));
  app.get('/prescriptions', (c) => prescriptionsPage(c, deps));
  app.get('/overdue', (c) => overduePage(c, deps));
  app.get('/prescriptions/:feed/:externalId', (c) => prescriptionPage(c, deps));
  app.get('/audit', (c) => auditPage(c, deps));
  app.notFound((c) => c.html(notFoundPage(), 404));
  app.onError((error, c) => {
    // the SQLSTATE and the error's class only: a message may quote a value
    deps.log.error({ event: 'console.error', code: (error as { code?: string }).code, error_name: error.name }, 'console request failed');
    return c.html(problemPage('Something went wrong', 'The request failed; the console log names the error code.'), 500);
  });
  return app;
}

/** A running console: its address and how to stop it. */
export interface RunningConsole {
  url: string;
  close(): Promise<void>;
}

/** How often the session check runs: a role that lost LOGIN, was dropped or changed its password loses its sessions within this. */
export const SESSION_CHECK_MS = 60_000;

/** Listens on host:port and runs the session check every minute; close() ends every session. */
export async function startConsole(deps: ConsoleDeps, host: string, port: number): Promise<RunningConsole> {
  const app = consoleApp(deps);
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port }, () => resolve(s));
    s.once('error', reject);
  });
  let checking = false;
  const sweep = setInterval(() => {
    if (checking) return;
    checking = true;
    deps
      .checkSessions()
      .catch((error: unknown) =>
        deps.log.error({ event: 'console.session_check_failed', code: (error as { code?: string }).code }, 'console session check failed'),
      )
      .finally(() => {
        checking = false;
      });
  }, SESSION_CHECK_MS);
  sweep.unref();
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    async close() {
      clearInterval(sweep);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await deps.store.endAll();
    },
  };
}

/** Whether a listen address is loopback (the only place cookies may go without Secure). Pure. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

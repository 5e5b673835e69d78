import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { deleteCookie, getCookie } from 'hono/cookie';
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
import { handleSignIn, SESSION_COOKIE, showSignIn } from './pages/sign-in.js';
import { proxiedIdentity, refusedPage } from './sso/gate.js';
import { handleSsoSignIn, showSsoSignIn } from './sso/sign-in.js';

/** Every response's headers: nothing cached, nothing framed, nothing loaded from elsewhere, no script. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
};

/** The console's routes and controls (docs/console.md). */
export function consoleApp(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.use('*', async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(name, value);
  });
  app.use('*', bodyLimit({ maxSize: 64 * 1024, onError: (c) => c.text('Payload too large', 413) }));
  // liveness for probes: the process answers; no session, no database (docs/console.md)
  app.get('/healthz', (c) => c.text('ok', 200));
  app.get('/console.css', (c) => c.body(CONSOLE_CSS, 200, { 'Content-Type': 'text/css; charset=utf-8' }));
  app.get('/favicon.ico', (c) => c.body(null, 404));
  app.get('/sign-in', (c) => {
    const ended = c.req.query('ended') === 'idle' ? 'You were signed out after a period without activity.' : undefined;
    return deps.sso ? showSsoSignIn(c, deps, deps.sso.settings, ended) : showSignIn(c, deps, ended);
  });
  app.post('/sign-in', (c) => (deps.sso ? handleSsoSignIn(c, deps, deps.sso) : handleSignIn(c, deps)));

  // everything else: a live session, and a matching CSRF token on every POST
  app.use('*', async (c, next) => {
    // SSO mode: every request must come from a trusted proxy with a mapped identity
    const who = deps.sso ? proxiedIdentity(c, deps.sso.settings) : undefined;
    if (who && 'refused' in who) return refusedPage(c, who.refused);
    const found = await deps.store.use(getCookie(c, SESSION_COOKIE));
    if (who && typeof found === 'object' && found.identity !== who.identity) {
      // another person behind the same browser, or the proxy's user changed: this session is not theirs
      await deps.store.end(found.id);
      deleteCookie(c, SESSION_COOKIE, { path: '/' });
      return c.redirect('/sign-in', 303);
    }
    if (found === undefined || found === 'expired') {
      deleteCookie(c, SESSION_COOKIE, { path: '/' });
      if (c.req.method === 'POST') return c.text('Forbidden: not signed in', 403);
      return c.redirect(found === 'expired' ? '/sign-in?ended=idle' : '/sign-in', 303);
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
    deleteCookie(c, SESSION_COOKIE, { path: '/' });
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

/** Listens on host:port and sweeps idle sessions every minute; close() ends every session. */
export async function startConsole(deps: ConsoleDeps, host: string, port: number): Promise<RunningConsole> {
  const app = consoleApp(deps);
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port }, () => resolve(s));
    s.once('error', reject);
  });
  const sweep = setInterval(() => void deps.store.sweep(), 60_000);
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

import type postgres from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { stillAllowed } from '../../src/console/compose.js';
import type { ConsoleDeps } from '../../src/console/context.js';
import { requirePasswordAuth } from '../../src/console/compose.js';
import { SESSION_CHECK_MS, startConsole } from '../../src/console/server.js';
import type { ConsoleSession } from '../../src/console/session-store.js';
import { createLogger } from '../../src/log/log.js';
import { postgresReachable } from '../support/db.js';
import { alertText, postSignIn, send } from '../support/console/console-http.js';
import { type ConsoleWorld, createConsoleWorld, FEED_A } from '../support/console/console-fixture.js';

// Sessions that end: the absolute lifetime, the minute's check (NOLOGIN, DROP ROLE, a changed
// password), the __Host- cookie behind an https CONSOLE_PUBLIC_URL, and an expired session's return.

const realServer = await postgresReachable();
const COOKIE = '__Host-console_session';

describe.skipIf(!realServer)('console sessions over real sockets (CONSOLE_PUBLIC_URL https on loopback)', { timeout: 120_000 }, () => {
  let world: ConsoleWorld;

  beforeAll(async () => {
    world = await createConsoleWorld('console_sessions', { publicUrl: 'https://console.example.org', sessionMaxMs: 30 * 60_000 });
  }, 120_000);
  afterAll(async () => {
    await world?.close();
  }, 60_000);

  async function signIn(role: string, fields: Record<string, string> = {}) {
    const reply = await postSignIn(world.console.url, { role, password: world.password, ...fields });
    expect(reply.status).toBe(303);
    const cookie = reply.cookies.find((c) => c.startsWith(`${COOKIE}=`));
    if (!cookie) throw new Error(`no ${COOKIE} cookie`);
    return { reply, cookie };
  }
  const get = (path: string, cookie: string) => send(world.console.url, path, { headers: { cookie } });

  test('the cookie is __Host- prefixed, Secure, HttpOnly, SameSite=Strict, Path=/ and has no Domain', async () => {
    const { reply, cookie } = await signIn(world.roles.a);
    const header = reply.setCookie.find((c) => c.startsWith(`${COOKIE}=`)) ?? '';
    expect(header).toMatch(/; Secure/);
    expect(header).toMatch(/; HttpOnly/);
    expect(header).toMatch(/; SameSite=Strict/);
    expect(header).toMatch(/; Path=\//);
    expect(header).not.toMatch(/Domain=/i);
    expect((await get('/', cookie)).status).toBe(200);
    // the plain name is not read when the cookie must be __Host-
    expect((await get('/', cookie.replace(COOKIE, 'console_session'))).status).toBe(303);
    await world.deps.store.endAll();
  });

  test('CONSOLE_SESSION_MAX ends a busy session; the sign-in page says why', async () => {
    const { cookie } = await signIn(world.roles.a);
    for (let i = 0; i < 2; i++) {
      world.advance(14 * 60_000);
      expect((await get('/', cookie)).status).toBe(200);
    }
    world.advance(2 * 60_000);
    const ended = await get('/quarantine', cookie);
    expect(ended.status).toBe(303);
    expect(ended.location).toBe('/sign-in?ended=lifetime&next=%2Fquarantine');
    const page = await send(world.console.url, ended.location ?? '');
    expect(alertText(page.body)).toContain('maximum length');
  });

  test('an expired session on a GET returns to its page after sign-in', async () => {
    const { cookie } = await signIn(world.roles.a);
    world.advance(15 * 60_000);
    const expired = await get(`/quarantine?feed=${FEED_A}`, cookie);
    expect(expired.location).toBe(`/sign-in?ended=idle&next=%2Fquarantine%3Ffeed%3D${FEED_A}`);
    const next = new URL(expired.location ?? '', 'http://x').searchParams.get('next') ?? '';
    const again = await signIn(world.roles.a, { next });
    expect(again.reply.location).toBe(`/quarantine?feed=${FEED_A}`);
    // a foreign return address is never followed
    const foreign = await signIn(world.roles.a, { next: '//evil.example/' });
    expect(foreign.reply.location).toBe('/');
    await world.deps.store.endAll();
  });

  test('an expired session on a Dismiss: nothing is changed, the page says so, and sign-in returns to the finding', async () => {
    const { cookie } = await signIn(world.roles.a);
    const finding = await get(`/quarantine/${FEED_A}/evt-a1`, cookie);
    expect(finding.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(finding.body)?.[1] ?? '';
    world.advance(15 * 60_000);
    const posted = await send(world.console.url, `/quarantine/${FEED_A}/evt-a1/dismiss`, {
      headers: { cookie },
      form: { _csrf: csrf, reason: 'duplicate' },
    });
    expect(posted.status).toBe(303);
    expect(posted.location).toBe(`/sign-in?ended=idle&unsaved=1&next=%2Fquarantine%2F${FEED_A}%2Fevt-a1`);
    const [open] = await world.owner<{ n: number }[]>`
      select count(*)::int as n from intake_sync.quarantine_open where feed = ${FEED_A} and quarantine_key = 'evt-a1'`;
    expect(open?.n).toBe(1);
    const page = await send(world.console.url, posted.location ?? '');
    expect(alertText(page.body)).toMatch(/without activity\. Nothing was changed/);
    expect(page.body).toContain(`name="next" value="/quarantine/${FEED_A}/evt-a1"`);
    const again = await signIn(world.roles.a, { next: `/quarantine/${FEED_A}/evt-a1` });
    expect(again.reply.location).toBe(`/quarantine/${FEED_A}/evt-a1`);
    await world.deps.store.endAll();
  });

  test('the session check ends the sessions of a role that lost LOGIN, and of a dropped role', async () => {
    const a = await signIn(world.roles.a);
    const b = await signIn(world.roles.b);
    await world.deps.checkSessions();
    expect((await get('/', a.cookie)).status).toBe(200);
    await world.owner.unsafe(`alter role "${world.roles.a}" nologin`);
    await world.deps.checkSessions();
    expect((await get('/', a.cookie)).location).toBe('/sign-in');
    expect((await get('/', b.cookie)).status).toBe(200);
    await world.owner.unsafe(`alter role "${world.roles.a}" login`);

    await world.owner.unsafe(`drop owned by "${world.roles.b}"`);
    await world.owner.unsafe(`drop role "${world.roles.b}"`);
    await world.deps.checkSessions();
    expect((await get('/', b.cookie)).location).toBe('/sign-in');
    expect(world.deps.store.size).toBe(0);
    expect(world.deps.budget.used).toBe(0);
  });
});

describe('the session check', () => {
  const session = (reconnect?: () => Promise<postgres.Sql>) => ({ reconnect }) as unknown as ConsoleSession;
  const probe = () => ({ end: async () => {} }) as unknown as postgres.Sql;
  test.each([
    ['the password changed', '28P01', false],
    ['NOLOGIN or dropped', '28000', false],
    ['the server is unreachable', 'ECONNREFUSED', 'unknown'],
  ] as const)('%s (%s): %s', async (_name, code, answer) => {
    const refused = session(async () => {
      throw Object.assign(new Error('no'), { code });
    });
    expect(await stillAllowed(refused, async () => undefined)).toBe(answer);
  });
  test('signed in again: the same role checks decide', async () => {
    expect(
      await stillAllowed(
        session(async () => probe()),
        async () => undefined,
      ),
    ).toBe(true);
    expect(
      await stillAllowed(
        session(async () => probe()),
        async () => 'This role is a superuser',
      ),
    ).toBe(false);
  });

  afterEach(() => {
    vi.useRealTimers();
  });
  test(`runs every ${SESSION_CHECK_MS / 1000} s while the console listens, and not after close`, async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let checks = 0;
    const deps = {
      checkSessions: async () => void checks++,
      store: { endAll: async () => {} },
      log: createLogger({ level: 'silent' }),
    } as unknown as ConsoleDeps;
    const running = await startConsole(deps, '127.0.0.1', 0);
    await vi.advanceTimersByTimeAsync(SESSION_CHECK_MS - 1);
    expect(checks).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(checks).toBe(1);
    await running.close();
    await vi.advanceTimersByTimeAsync(SESSION_CHECK_MS * 3);
    expect(checks).toBe(1);
    expect(SESSION_CHECK_MS).toBeLessThanOrEqual(60_000);
  });
});

describe.skipIf(!realServer)('start check: the server must ask for the password', () => {
  const log = createLogger({ level: 'silent' });
  const target = { url: 'postgres://127.0.0.1:5432/postgres', schema: 'intake_sync', urlRole: 'postgres' };
  test('the test server trusts 127.0.0.1: the console refuses to start, naming the pg_hba.conf line', async () => {
    await expect(requirePasswordAuth(target, { host: '127.0.0.1', allowTrust: false, log })).rejects.toThrow(
      /signed in role "postgres" with a wrong password \(trust authentication\).*pg_hba\.conf line \d+ \(host .* trust\).*scram-sha-256/,
    );
  });
  test('CONSOLE_ALLOW_TRUST_AUTH=local-development starts on loopback only', async () => {
    await expect(requirePasswordAuth(target, { host: '127.0.0.1', allowTrust: true, log })).resolves.toBeUndefined();
    await expect(requirePasswordAuth(target, { host: '0.0.0.0', allowTrust: true, log })).rejects.toThrow(/^CONSOLE_ALLOW_TRUST_AUTH: /);
  });
});

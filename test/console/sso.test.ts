import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { composeConsole } from '../../src/console/compose.js';
import { type RunningConsole, startConsole } from '../../src/console/server.js';
import { ssoSettings } from '../../src/console/sso/settings.js';
import { createLogger } from '../../src/log/log.js';
import { ADMIN_URL } from '../support/db.js';
import { type ConsoleWorld, createConsoleWorld, FEED_A, FEED_B } from '../support/console/console-fixture.js';
import { send } from '../support/console/console-http.js';
import { roleTagStatement } from '../support/test-run.js';

const HEADER = 'X-Auth-Request-Email';

describe('console SSO mode (trusted header) over real sockets', () => {
  let world: ConsoleWorld;
  let sso: RunningConsole;
  let dir: string;
  let login: string;
  const password = 'login-pw-sso29';
  let offset = 0;
  let ssoDeps: ReturnType<typeof composeConsole>;

  beforeAll(async () => {
    world = await createConsoleWorld('console_sso');
    login = `console_login_${world.roles.a.slice(-6)}`;
    await world.owner.unsafe(`create role "${login}" login password '${password}' noinherit`);
    await world.owner.unsafe(roleTagStatement(login));
    await world.owner.unsafe(`grant "${world.roles.a}", "${world.roles.b}" to "${login}"`);
    dir = mkdtempSync(join(tmpdir(), 'console-sso-'));
    writeFileSync(
      join(dir, 'roles.map'),
      `# who is which role\nalice@clinic-a.example = ${world.roles.a}\nbob@clinic-b.example = ${world.roles.b}\n`,
    );
    const settings = ssoSettings({
      CONSOLE_TRUSTED_HEADER: HEADER,
      CONSOLE_TRUSTED_PROXIES: '127.0.0.1, ::1/128',
      CONSOLE_ROLE_MAP_FILE: join(dir, 'roles.map'),
      CONSOLE_LOGIN_ROLE: login,
      CONSOLE_LOGIN_PASSWORD: password,
    });
    const url = world.tdb.url as string;
    ssoDeps = composeConsole(
      { databaseUrl: url, schema: 'intake_sync', host: '127.0.0.1', idleTimeoutMs: 15 * 60_000, sessionsPerRole: 10, sso: settings },
      createLogger({ level: 'silent' }),
      () => Date.now() + offset,
    );
    sso = await startConsole(ssoDeps, '127.0.0.1', 0);
  }, 60_000);

  afterAll(async () => {
    await sso?.close();
    await world?.close();
    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop role if exists "${login}"`).catch(() => {});
    await admin.end({ timeout: 1 });
    rmSync(dir, { recursive: true, force: true });
  });

  /** Signs in through the "proxy" at 127.0.0.1 with `identity`; returns the cookie header. */
  async function signIn(identity: string): Promise<string> {
    const headers = { [HEADER]: identity };
    const form = await send(sso.url, '/sign-in', { localAddress: '127.0.0.1', headers });
    expect(form.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
    const posted = await send(sso.url, '/sign-in', {
      localAddress: '127.0.0.1',
      headers: { ...headers, cookie: form.cookies.join('; ') },
      form: { _csrf: csrf },
    });
    expect(posted.status).toBe(303);
    const session = posted.cookies.find((c) => c.startsWith('console_session='));
    expect(session).toBeDefined();
    return session as string;
  }

  test('a header from the trusted peer signs in as the mapped role: its feed only, and the audit actor is that role', async () => {
    const cookie = await signIn('Alice@Clinic-A.example');
    const headers = { [HEADER]: 'alice@clinic-a.example', cookie };
    const list = await send(sso.url, '/quarantine', { localAddress: '127.0.0.1', headers });
    expect(list.status).toBe(200);
    expect(list.body).toContain('evt-a1');
    expect(list.body).not.toContain('evt-b1');
    expect((await send(sso.url, `/quarantine/${FEED_B}/evt-b1`, { localAddress: '127.0.0.1', headers })).status).toBe(404);

    const page = await send(sso.url, `/quarantine/${FEED_A}/evt-a5`, { localAddress: '127.0.0.1', headers });
    expect(page.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    // CSRF still enforced: without the token, nothing is dismissed
    const bare = await send(sso.url, `/quarantine/${FEED_A}/evt-a5/dismiss`, {
      localAddress: '127.0.0.1',
      headers,
      form: { reason: 'duplicate' },
    });
    expect(bare.status).toBe(403);
    const done = await send(sso.url, `/quarantine/${FEED_A}/evt-a5/dismiss`, {
      localAddress: '127.0.0.1',
      headers,
      form: { _csrf: csrf, reason: 'duplicate' },
    });
    expect(done.status).toBe(303);
    const rows = await world.owner<{ actor: string; on_behalf_of: string | null }[]>`
      select actor, on_behalf_of from intake_sync.audit_entries where action = 'quarantine.dismiss' and subject = 'evt-a5'`;
    expect(rows).toHaveLength(1);
    expect(rows[0]?.on_behalf_of).toBe('alice@clinic-a.example');
    // actor is session_user by design (docs/security.md): the console's login role; the identity is on_behalf_of
    expect(rows[0]?.actor).toBe(login);
    // and the statement ran as the mapped role: its grants, not the login role's (noinherit: none of its own)
    expect(rows[0]?.actor).not.toBe(world.roles.a);
  });

  test('the same header from an untrusted peer (127.0.0.2) is refused, and never signs in', async () => {
    const headers = { [HEADER]: 'alice@clinic-a.example' };
    const form = await send(sso.url, '/sign-in', { localAddress: '127.0.0.2', headers });
    expect(form.status).toBe(403);
    expect(form.body).toContain('only through its sign-in proxy');
    const cookie = await signIn('alice@clinic-a.example');
    // a stolen cookie used from elsewhere is refused too
    expect((await send(sso.url, '/quarantine', { localAddress: '127.0.0.2', headers: { ...headers, cookie } })).status).toBe(403);
  });

  test('an unmapped identity gets 403 "no role mapped", never a default role', async () => {
    const reply = await send(sso.url, '/sign-in', { localAddress: '127.0.0.1', headers: { [HEADER]: 'mallory@example.org' } });
    expect(reply.status).toBe(403);
    expect(reply.body).toContain('No role mapped');
    expect(reply.body).not.toContain('mallory');
    expect((await send(sso.url, '/sign-in', { localAddress: '127.0.0.1' })).status).toBe(403);
  });

  test('a session belongs to its identity: another header ends it; sign-out needs a click to sign in again', async () => {
    const cookie = await signIn('alice@clinic-a.example');
    const other = await send(sso.url, '/', { localAddress: '127.0.0.1', headers: { [HEADER]: 'bob@clinic-b.example', cookie } });
    expect(other.status).toBe(303);
    expect(other.location).toBe('/sign-in');
    // the old session is gone even for alice
    const again = await send(sso.url, '/', { localAddress: '127.0.0.1', headers: { [HEADER]: 'alice@clinic-a.example', cookie } });
    expect(again.location).toBe('/sign-in');
  });

  test('idle logoff holds in this mode: the header alone does not sign the user back in', async () => {
    const cookie = await signIn('alice@clinic-a.example');
    const headers = { [HEADER]: 'alice@clinic-a.example', cookie };
    expect((await send(sso.url, '/', { localAddress: '127.0.0.1', headers })).status).toBe(200);
    offset += 15 * 60_000;
    const idle = await send(sso.url, '/', { localAddress: '127.0.0.1', headers });
    expect(idle.status).toBe(303);
    expect(idle.location).toBe('/sign-in?ended=idle');
    const page = await send(sso.url, '/sign-in?ended=idle', { localAddress: '127.0.0.1', headers });
    expect(page.body).toContain('signed out after a period without activity');
  });

  test('the minute check ends a session whose mapped role is no longer granted to the login role', async () => {
    const cookie = await signIn('alice@clinic-a.example');
    const headers = { [HEADER]: 'alice@clinic-a.example', cookie };
    await ssoDeps.checkSessions();
    expect((await send(sso.url, '/', { localAddress: '127.0.0.1', headers })).status).toBe(200);
    await world.owner.unsafe(`revoke "${world.roles.a}" from "${login}"`);
    try {
      await ssoDeps.checkSessions();
      const after = await send(sso.url, '/', { localAddress: '127.0.0.1', headers });
      expect(after.status).toBe(303);
      expect(after.location).toBe('/sign-in');
    } finally {
      await world.owner.unsafe(`grant "${world.roles.a}" to "${login}"`);
    }
  });

  test('CONSOLE_TRUSTED_PROXIES refuses a trust-everyone range at start, naming the variable', () => {
    expect(() =>
      ssoSettings({
        CONSOLE_TRUSTED_HEADER: HEADER,
        CONSOLE_TRUSTED_PROXIES: '0.0.0.0/0',
        CONSOLE_ROLE_MAP_FILE: join(dir, 'roles.map'),
        CONSOLE_LOGIN_ROLE: login,
      }),
    ).toThrow(/^CONSOLE_TRUSTED_PROXIES: "0\.0\.0\.0\/0" is wider than \/16/);
  });
});

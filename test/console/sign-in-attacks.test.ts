import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { SIGN_IN_LIMITS, SignInLimiter } from '../../src/console/rate-limit.js';
import { parseTrustedProxies } from '../../src/console/sso/trusted-proxies.js';
import { createLogger } from '../../src/log/log.js';
import { postgresReachable } from '../support/db.js';
import { postSignIn, signInForm } from '../support/console/console-http.js';
import { type ConsoleWorld, createConsoleWorld } from '../support/console/console-fixture.js';

// The sign-in limits raced over real sockets against the real server: parallel requests from several
// loopback addresses (127.0.0.x) and, through the trusted proxy 127.0.0.1, X-Forwarded-For clients.

const realServer = await postgresReachable();

describe.skipIf(!realServer)('sign-in limits over real sockets', { timeout: 120_000 }, () => {
  let world: ConsoleWorld;
  let tried: string[];
  const logs: Record<string, unknown>[] = [];

  beforeAll(async () => {
    world = await createConsoleWorld('console_limits', { proxies: parseTrustedProxies('127.0.0.1') });
    // counts every password really tried against the database. The test server trusts 127.0.0.1 (it
    // asks no password), so after the real connection this stands in for the server's password check
    // and refuses a wrong one with its SQLSTATE, 28P01: the connections and their timing stay real
    const connect = world.deps.connect;
    world.deps.connect = async (role: string, password: string): Promise<postgres.Sql> => {
      tried.push(role);
      const sql = await connect(role, password);
      if (password === world.password) return sql;
      await sql.end({ timeout: 1 });
      throw Object.assign(new Error('password authentication failed'), { code: '28P01' });
    };
    world.deps.log = createLogger({
      level: 'info',
      destination: { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
    });
  }, 120_000);
  afterAll(async () => {
    await world?.close();
  }, 60_000);

  const attempts = (event: string) => logs.filter((l) => l.event === event);

  test('60 parallel wrong passwords from one address: at most 10 are tried, the rest 429 untried', async () => {
    tried = [];
    const form = await signInForm(world.console.url, '127.0.0.2');
    const replies = await Promise.all(
      Array.from({ length: 60 }, () =>
        postSignIn(world.console.url, { role: world.roles.a, password: 'wrong-guess' }, { localAddress: '127.0.0.2', form }),
      ),
    );
    const statuses = replies.map((r) => r.status);
    expect(tried.length).toBe(10);
    expect(statuses.filter((s) => s === 401)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50);
    expect(Number(replies.find((r) => r.status === 429)?.retryAfter)).toBeGreaterThan(0);
    // every failed and limited attempt is logged with the client and the role, never the password
    expect(attempts('console.sign_in.failed').filter((l) => l.client === '127.0.0.2' && l.role === world.roles.a)).toHaveLength(10);
    expect(attempts('console.sign_in.limited').filter((l) => l.client === '127.0.0.2' && l.role === world.roles.a)).toHaveLength(50);
    expect(JSON.stringify(logs)).not.toContain('wrong-guess');
  });

  test('an attacked role still signs in from an address that has not failed, and the attackers are slowed', async () => {
    tried = [];
    // three more attackers, behind the trusted proxy: each is its own client (X-Forwarded-For), 10 each
    const attackers = ['203.0.113.1', '203.0.113.2', '203.0.113.3'];
    const forms = await Promise.all(attackers.map(() => signInForm(world.console.url)));
    const replies = await Promise.all(
      attackers.flatMap((client, i) =>
        Array.from({ length: 12 }, () =>
          postSignIn(world.console.url, { role: world.roles.b, password: 'wrong' }, { forwardedFor: client, form: forms[i] }),
        ),
      ),
    );
    expect(tried.length).toBeLessThanOrEqual(30);
    expect(replies.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(6);
    // the proxy's own address is not the key: another client behind it, with the right password, signs in
    tried = [];
    const owner = await postSignIn(world.console.url, { role: world.roles.b, password: world.password }, { forwardedFor: '198.51.100.7' });
    expect(owner.status).toBe(303);
    expect(owner.location).toBe('/');
    expect(tried).toEqual([world.roles.b]);
    // an attacker that failed is refused untried, even with the right password (its limit; the role's backoff: rate-limit.test.ts)
    tried = [];
    const slowed = await postSignIn(world.console.url, { role: world.roles.b, password: world.password }, { forwardedFor: '203.0.113.1' });
    expect(slowed.status).toBe(429);
    expect(tried).toEqual([]);
    expect(attempts('console.sign_in.limited').some((l) => l.client === '203.0.113.1' && l.role === world.roles.b)).toBe(true);
  });

  test('X-Forwarded-For from an untrusted peer is ignored; IPv6 clients are grouped by /64', async () => {
    tried = [];
    // a role name per guess (none exists): only the per-address limit is in play
    // 127.0.0.3 is not a trusted proxy: its header names nobody, the key is 127.0.0.3
    const forged = await Promise.all(
      Array.from({ length: 11 }, (_, i) =>
        postSignIn(world.console.url, { role: `nobody_${i}`, password: 'x' }, { localAddress: '127.0.0.3', forwardedFor: `192.0.2.${i}` }),
      ),
    );
    expect(forged.filter((r) => r.status === 429)).toHaveLength(1);
    expect(attempts('console.sign_in.failed').filter((l) => l.client === '127.0.0.3')).toHaveLength(10);
    // ten addresses of one /64 through the proxy use up that /64; its next address is refused, another /64 is tried
    tried = [];
    const form = await signInForm(world.console.url);
    const same64 = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        postSignIn(world.console.url, { role: `nobody_v6_${i}`, password: 'x' }, { forwardedFor: `2001:db8:1:2::${i + 1}`, form }),
      ),
    );
    expect(same64.map((r) => r.status)).toEqual(Array(10).fill(401));
    const eleventh = await postSignIn(world.console.url, { role: 'nobody_v6_x', password: 'x' }, { forwardedFor: '2001:db8:1:2:ffff::9' });
    expect(eleventh.status).toBe(429);
    const other64 = await postSignIn(world.console.url, { role: 'nobody_v6_y', password: 'x' }, { forwardedFor: '2001:db8:1:3::1' });
    expect(other64.status).toBe(401);
    expect(tried).toHaveLength(11);
  });

  test('an attacked role: an address that failed waits 1 s, then 2 s (a stopped clock); a clean one signs in at once', async () => {
    // the limiter on a clock that moves only when told, so no request's own duration counts
    let now = 0;
    world.deps.limiter = new SignInLimiter(SIGN_IN_LIMITS, () => now);
    // ten clients behind the proxy fail once each on role a: it is attacked whatever ran before
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        postSignIn(world.console.url, { role: world.roles.a, password: 'wrong' }, { forwardedFor: `198.18.0.${i + 1}` }),
      ),
    );
    tried = [];
    const attacker = { forwardedFor: '198.18.1.1' };
    const guess = () => postSignIn(world.console.url, { role: world.roles.a, password: 'wrong' }, attacker);
    expect((await guess()).status).toBe(401);
    const waited = await guess();
    expect(waited.status).toBe(429);
    expect(waited.retryAfter).toBe('1');
    now += 1_000;
    expect((await guess()).status).toBe(401);
    expect((await guess()).status).toBe(429);
    now += 1_999;
    expect((await guess()).status).toBe(429);
    now += 1;
    expect((await guess()).status).toBe(401);
    expect(tried).toHaveLength(3);
    // meanwhile the owner, from an address that has not failed, is never slowed
    const owner = await postSignIn(world.console.url, { role: world.roles.a, password: world.password }, { forwardedFor: '198.18.2.1' });
    expect(owner.status).toBe(303);
  });
});

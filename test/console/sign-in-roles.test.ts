import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { grantsScript } from '../../src/db/grants-script.js';
import { ADMIN_URL, postgresReachable } from '../support/db.js';
import { alertText, postSignIn, send } from '../support/console/console-http.js';
import { type ConsoleWorld, createConsoleWorld } from '../support/console/console-fixture.js';
import { waitFor } from '../support/wait-for.js';
import { roleTagStatement } from '../support/test-run.js';

// Only the roles the console is for, and bounded connections: real roles sign in over real sockets.

const realServer = await postgresReachable();

describe.skipIf(!realServer)('who may sign in, and how many backends the console opens', { timeout: 120_000 }, () => {
  let world: ConsoleWorld;
  const suffix = Math.random().toString(16).slice(2, 8);
  const extra = (name: string) => `console_${name}_${suffix}`;
  const created: string[] = [];

  async function createRole(name: string, attributes = '') {
    await world.owner.unsafe(`create role "${name}" login password '${world.password}' ${attributes}`);
    await world.owner.unsafe(roleTagStatement(name));
    created.push(name);
  }

  /** The backends the console holds as `role` (pg_stat_activity), once its closed ones are gone. */
  async function backendsOf(role: string): Promise<number> {
    const count = async () =>
      (await world.owner<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where usename = ${role}`)[0]?.n ?? 0;
    // a closed connection's backend exits after the client's Terminate: wait for it, bounded; the
    // caller's assertion then says how many are left
    await waitFor(async () => (await count()) === 0, { timeoutMs: 20_000, what: `${role}'s backends to exit` }).catch(() => {});
    return count();
  }

  beforeAll(async () => {
    world = await createConsoleWorld('console_roles', { maxConnections: 4, sessionsPerRole: 2 });
  }, 120_000);
  afterAll(async () => {
    await world?.owner.unsafe(`alter schema intake_sync owner to postgres`).catch(() => {});
    await world?.close();
    const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    for (const role of created.reverse()) {
      await admin.unsafe(`drop owned by "${role}"`).catch(() => {});
      await admin.unsafe(`drop role if exists "${role}"`).catch(() => {});
    }
    await admin.end({ timeout: 1 });
  }, 60_000);

  test.each([
    ['superuser', 'superuser', /This role is a superuser/],
    ['bypassrls', 'bypassrls', /BYPASSRLS/],
    ['createrole', 'createrole', /CREATEROLE/],
    ['createdb', 'createdb', /CREATEDB/],
    ['nofeed', '', /may see no feed: ask an administrator/],
  ])('a %s role is refused at sign-in with its reason, and no session or backend stays', async (name, attributes, reason) => {
    const role = extra(name);
    await createRole(role, attributes);
    const reply = await postSignIn(world.console.url, { role, password: world.password });
    expect(reply.status).toBe(403);
    expect(alertText(reply.body)).toMatch(reason);
    expect(reply.body).toContain('Sign-in refused');
    expect(reply.cookies.some((c) => c.startsWith('console_session='))).toBe(false);
    expect(world.deps.store.size).toBe(0);
    expect(world.deps.budget.used).toBe(0);
    expect(await backendsOf(role)).toBe(0);
  });

  test("the runtime role, DATABASE_URL's role and a member of the schema's owner are refused", async () => {
    const runtime = extra('runtime');
    await createRole(runtime);
    await world.owner.unsafe(grantsScript('runtime', 'intake_sync', runtime, { kind: 'all' }).join('\n'));
    const r = await postSignIn(world.console.url, { role: runtime, password: world.password });
    expect(r.status).toBe(403);
    expect(alertText(r.body)).toContain("the daemon's runtime role");

    // DATABASE_URL's user (the fixture's is postgres, a superuser: here a staff role stands in for it)
    world.deps.target.urlRole = world.roles.b;
    const url = await postSignIn(world.console.url, { role: world.roles.b, password: world.password });
    world.deps.target.urlRole = 'postgres';
    expect(url.status).toBe(403);
    expect(alertText(url.body)).toContain("DATABASE_URL's role");

    const owners = extra('owners');
    const member = extra('ownermember');
    await world.owner.unsafe(`create role "${owners}" nologin`);
    await world.owner.unsafe(roleTagStatement(owners));
    created.push(owners);
    await createRole(member, `in role "${owners}"`);
    await world.owner.unsafe(`alter schema intake_sync owner to "${owners}"`);
    const owned = await postSignIn(world.console.url, { role: member, password: world.password });
    await world.owner.unsafe(`alter schema intake_sync owner to postgres`);
    expect(owned.status).toBe(403);
    expect(alertText(owned.body)).toContain("owns the deployment's schema");
    expect(world.deps.store.size).toBe(0);
    expect(world.deps.budget.used).toBe(0);
  });

  test('CONSOLE_MAX_CONNECTIONS=4 and CONSOLE_SESSIONS_PER_ROLE=2: a third session of a role, then a fourth backend, are refused', async () => {
    const signIn = (role: string) => postSignIn(world.console.url, { role, password: world.password });
    expect((await signIn(world.roles.a)).status).toBe(303);
    expect((await signIn(world.roles.a)).status).toBe(303);
    const third = await signIn(world.roles.a);
    expect(third.status).toBe(429);
    expect(third.body).toContain('CONSOLE_SESSIONS_PER_ROLE');
    const b = await signIn(world.roles.b);
    expect(b.status).toBe(303);
    // 3 sessions hold 3 backends; the 4th is the session check's: no sign-in may take it
    const full = await signIn(world.roles.b);
    expect(full.status).toBe(503);
    expect(full.body).toContain('connection limit');
    // a burst of sign-ins while full opens nothing
    const burst = await Promise.all(Array.from({ length: 10 }, () => signIn(world.roles.b)));
    expect(burst.every((r) => r.status === 503)).toBe(true);
    const [row] = await world.owner<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity where application_name = 'intake-sync-console' and datname = current_database()`;
    expect(row?.n).toBeLessThanOrEqual(3);
    // every page still works within one backend per session
    const cookie = b.cookies.find((c) => c.startsWith('console_session=')) ?? '';
    for (const path of ['/', '/quarantine', '/prescriptions', '/audit']) {
      expect((await send(world.console.url, path, { headers: { cookie } })).status).toBe(200);
    }
    await world.deps.store.endAll();
    expect(world.deps.budget.used).toBe(0);
  });
});

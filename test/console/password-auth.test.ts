import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { grantsScript } from '../../src/db/grants-script.js';
import { composeConsole, requirePasswordAuth } from '../../src/console/compose.js';
import type { ConsoleDeps } from '../../src/console/context.js';
import { type RunningConsole, startConsole } from '../../src/console/server.js';
import { openDatabase } from '../../src/db/connection.js';
import { registerFeeds } from '../../src/db/feed-registry.js';
import { runMigrations } from '../../src/db/migrate.js';
import { createLogger } from '../../src/log/log.js';
import { postSignIn, send, signInForm } from '../support/console/console-http.js';
import { type PasswordServer, passwordServerMissing, startPasswordServer } from '../support/console/password-server.js';

// The console against a server that asks for passwords (a throwaway scram-sha-256 cluster): the start
// check passes, a wrong password is refused by the server itself, and a changed password ends the
// sessions at the next minute's check.

const missing = passwordServerMissing();

describe.skipIf(missing !== undefined)('the console against a scram-sha-256 server', { timeout: 180_000 }, () => {
  let server: PasswordServer;
  let deps: ConsoleDeps;
  let running: RunningConsole;
  let admin: postgres.Sql;
  const logs: Record<string, unknown>[] = [];

  beforeAll(async () => {
    server = await startPasswordServer();
    admin = postgres(server.adminUrl('postgres'), { max: 1, onnotice: () => {} });
    await admin`create database console`;
    const database = await openDatabase({ url: server.adminUrl('console') });
    await runMigrations(database);
    await registerFeeds(database.db, ['clinic_a'], null);
    await database.close();
    const owner = postgres(server.adminUrl('console'), { max: 1, onnotice: () => {} });
    await owner.unsafe(`create role staff login password 'first-password'`);
    await owner.unsafe(grantsScript('app', 'intake_sync', 'staff', { kind: 'feeds', feeds: ['clinic_a'] }).join('\n'));
    await owner.end({ timeout: 1 });
    // DATABASE_URL as the runtime would have it, password included: the console keeps none of it
    deps = composeConsole(
      // more connection slots than one address may try at once, so the burst below meets only the sign-in limit
      { databaseUrl: server.adminUrl('console'), schema: 'intake_sync', host: '127.0.0.1', idleTimeoutMs: 15 * 60_000, maxConnections: 20 },
      createLogger({
        level: 'info',
        destination: { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
      }),
    );
    running = await startConsole(deps, '127.0.0.1', 0);
  }, 180_000);
  afterAll(async () => {
    await running?.close();
    await admin?.end({ timeout: 1 });
    server?.stop();
  }, 60_000);

  test("the start check passes: the server asks for the password; the console kept no part of DATABASE_URL's credentials", async () => {
    await expect(requirePasswordAuth(deps.target, { host: '127.0.0.1', allowTrust: false, log: deps.log })).resolves.toBeUndefined();
    expect(JSON.stringify(deps.target)).not.toContain('scram-test-superuser');
  });

  test('a wrong password is refused by the server (28P01); the right one signs in', async () => {
    const wrong = await postSignIn(running.url, { role: 'staff', password: 'not-it' });
    expect(wrong.status).toBe(401);
    expect(logs.some((l) => l.event === 'console.sign_in.failed' && l.code === '28P01' && l.role === 'staff')).toBe(true);
    const right = await postSignIn(running.url, { role: 'staff', password: 'first-password' });
    expect(right.status).toBe(303);
    await deps.store.endAll();
  });

  test('30 parallel wrong passwords from one address: the server refuses exactly 10, the other 20 are never tried', async () => {
    const form = await signInForm(running.url, '127.0.0.5');
    const replies = await Promise.all(
      Array.from({ length: 30 }, () => postSignIn(running.url, { role: 'staff', password: 'guess' }, { localAddress: '127.0.0.5', form })),
    );
    expect(replies.filter((r) => r.status === 401)).toHaveLength(10);
    expect(replies.filter((r) => r.status === 429)).toHaveLength(20);
    const failed = logs.filter((l) => l.event === 'console.sign_in.failed' && l.client === '127.0.0.5');
    expect(failed).toHaveLength(10);
    expect(failed.every((l) => l.code === '28P01')).toBe(true);
  });

  test('a password change ends the sessions at the next check; the new password signs in', async () => {
    // staff is now an attacked role (11 failures): 127.0.0.6 has not failed, so it signs in at once
    const first = await postSignIn(running.url, { role: 'staff', password: 'first-password' }, { localAddress: '127.0.0.6' });
    expect(first.status).toBe(303);
    const cookie = first.cookies.find((c) => c.startsWith('console_session=')) ?? '';
    await deps.checkSessions();
    expect((await send(running.url, '/', { headers: { cookie } })).status).toBe(200);
    await admin.unsafe(`alter role staff password 'second-password'`);
    await deps.checkSessions();
    const after = await send(running.url, '/', { headers: { cookie } });
    expect(after.status).toBe(303);
    expect(after.location).toBe('/sign-in');
    expect(deps.store.size).toBe(0);
    expect((await postSignIn(running.url, { role: 'staff', password: 'second-password' }, { localAddress: '127.0.0.6' })).status).toBe(303);
    await deps.store.endAll();
  });
});

describe.skipIf(missing === undefined)('the scram-sha-256 server tests', () => {
  test(`skipped: ${missing}`, () => {
    expect(missing).toBeDefined();
  });
});

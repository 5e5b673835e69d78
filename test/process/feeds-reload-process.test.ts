import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/connection.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { sampleIdentity } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { registerLocalPrescriptions } from '../../src/sync/matching/local-prescriptions.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { leadersByFeed } from '../support/process/feed-fleet.js';
import { waitFor } from '../support/wait-for.js';
import { spawnCli, stopProcesses, type WorkerProcess } from '../support/process/worker-process.js';

const hasPostgres = await postgresReachable();
const COUNT = 20;
// each wait covers a debounce (0.5 s), a lease retry and a few polls, on a loaded 2-core machine
const WAIT_MS = 45_000;

/**
 * Two replicas read one FEEDS_FILE mounted the way Kubernetes mounts a ConfigMap and a Secret (a
 * `..data` symlink swapped for each new version). Feeds are added, fixed (a rotated secret file
 * resumes a feed stopped by a 401), refused (a bad file: the running feeds keep running, the
 * metric says so) and removed (SIGHUP), and neither process restarts.
 */
describe.skipIf(!hasPostgres)(`FEEDS_FILE reloaded while running (${NEEDS_POSTGRES})`, () => {
  let test: TestDatabase;
  let west: Sandbox;
  let east: Sandbox;
  let dir: string;
  let version = 0;
  const children: WorkerProcess[] = [];

  /** A Kubernetes-style volume: `<dir>/<name>` links into `..data/`, and a new version swaps `..data` at once. */
  function publish(volume: string, files: Record<string, string>): void {
    version += 1;
    const root = join(dir, volume);
    const next = `..v${version}`;
    mkdirSync(join(root, next), { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(root, next, name), text, { mode: 0o600 });
    symlinkSync(next, join(root, '..data_tmp'));
    renameSync(join(root, '..data_tmp'), join(root, '..data'));
    for (const name of Object.keys(files)) {
      try {
        symlinkSync(join('..data', name), join(root, name));
      } catch {
        // already linked by an earlier version
      }
    }
  }

  const westFeed = () => ({
    name: 'west',
    base_url: west.baseUrl,
    api_key: west.credentials[0]?.key,
    api_secret: west.credentials[0]?.secret,
  });
  const eastFeed = () => ({
    name: 'east',
    base_url: east.baseUrl,
    api_key: east.credentials[1]?.key,
    api_secret: `file:${join(dir, 'secrets', 'east_secret')}`,
  });
  const feedsFile = () => join(dir, 'config', 'feeds.json');

  const delivered = async (feed: string) =>
    (
      await queryRows<{ n: number }>(
        test.database.db,
        sql`select count(*)::int as n from intake_sync.prescriptions where feed = ${feed} and status = 'delivered'`,
      )
    )[0]?.n ?? 0;

  async function healthPort(daemon: WorkerProcess): Promise<number> {
    let port = 0;
    await waitFor(
      () => {
        port = Number(daemon.logs().find((l) => l.component === 'health' && typeof l.port === 'number')?.port ?? 0);
        return port > 0;
      },
      { timeoutMs: WAIT_MS, what: 'the health endpoint' },
    );
    return port;
  }
  const metricsOf = async (port: number) => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const readyFeeds = async (port: number) =>
    Object.keys(
      ((await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { feeds?: Record<string, unknown> }).feeds ?? {},
    ).sort();

  beforeAll(async () => {
    test = await createTestDatabase('runtime_feeds_reload');
    dir = mkdtempSync(join(tmpdir(), 'feeds-reload-'));
    west = await startSandbox({ clock: new ManualClock() });
    // east's account is its simulator's second tenant: its event ids differ from west's
    east = await startSandbox({
      clock: new ManualClock(),
      credentials: [
        { key: 'east-unused', secret: 'east-unused-secret' },
        { key: 'east-key', secret: 'east-secret-0123456789' },
      ],
    });
    for (const [sandbox, feed] of [
      [west, 'west'],
      [east, 'east'],
    ] as const) {
      sandbox.store.seedBulk({ count: COUNT, rejectEvery: 1_000, prefix: feed, key: sandbox.credentials.at(-1)?.key });
      await registerLocalPrescriptions(
        test.database.db,
        Array.from({ length: COUNT }, (_, i) => ({ external_id: `${feed}-${i}`, prescription_identity: sampleIdentity(i) })),
        { feed },
      );
    }
  });
  afterEach(() => stopProcesses(children));
  afterAll(async () => {
    await west?.close();
    await east?.close();
    await test?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'adds a feed, resumes it when its secret file is fixed, refuses a bad file, removes a feed on SIGHUP; no restart',
    async () => {
      publish('config', { 'feeds.json': JSON.stringify([westFeed()]) });
      publish('secrets', { east_secret: 'not-the-secret\n' });
      const env = {
        DATABASE_URL: test.url ?? '',
        FEEDS_FILE: feedsFile(),
        PAGE_LIMIT: '5',
        POLL_INTERVAL_MS: '100',
        LEASE_RETRY_MS: '250',
        LEASE_TTL_MS: '3000',
        HEALTH_HOST: '127.0.0.1',
        HEALTH_PORT: '0',
        SHUTDOWN_GRACE_MS: '10000',
      };
      const replicas = [spawnCli(['run'], env), spawnCli(['run'], env)];
      children.push(...replicas);
      const ports = await Promise.all(replicas.map(healthPort));
      await waitFor(async () => (await delivered('west')) === COUNT, { timeoutMs: WAIT_MS, what: 'feed west to deliver' });

      // 1. east added, with a secret file holding the wrong secret: it starts, and its leader stops it on the 401
      publish('config', { 'feeds.json': JSON.stringify([westFeed(), eastFeed()]) });
      for (const port of ports)
        await waitFor(async () => (await readyFeeds(port)).join() === 'east,west', { timeoutMs: WAIT_MS, what: 'east on every replica' });
      await waitFor(
        async () =>
          (
            await queryRows<{ n: number }>(test.database.db, sql`select count(*)::int as n from intake_sync.feed_stops where feed = 'east'`)
          )[0]?.n === 1,
        { timeoutMs: WAIT_MS, what: 'feed east stopped by the 401' },
      );
      expect(await delivered('east')).toBe(0);

      // 2. the secret rotated in its Secret: the feed stopped by the 401 resumes and drains
      publish('secrets', { east_secret: `${east.credentials[1]?.secret}\n` });
      await waitFor(async () => (await delivered('east')) === COUNT, { timeoutMs: WAIT_MS, what: 'feed east to resume and deliver' });

      // 3. a bad file: refused with one line per problem on every replica, the running feeds keep running
      publish('config', {
        'feeds.json': JSON.stringify([westFeed(), { ...eastFeed(), api_key: 'env:NOT_SET_ANYWHERE' }, { name: 'Bad Name' }]),
      });
      for (const port of ports)
        await waitFor(async () => /^intake_sync_feeds_reload_failed 1$/m.test(await metricsOf(port)), {
          timeoutMs: WAIT_MS,
          what: 'the reload failure metric',
        });
      for (const [i, port] of ports.entries()) {
        const metrics = await metricsOf(port);
        expect(metrics).toMatch(/^intake_sync_feeds_reload_failures_total 1$/m);
        expect(await readyFeeds(port)).toEqual(['east', 'west']);
        const refused = replicas[i]!.logs()
          .filter((l) => typeof l.msg === 'string' && l.msg.startsWith('FEEDS_FILE reload refused: FEEDS_FILE:'))
          .map((l) => String(l.msg));
        expect(refused).toContain(
          `FEEDS_FILE reload refused: FEEDS_FILE: ${feedsFile()} [1].api_key: names the environment variable NOT_SET_ANYWHERE, which is not set`,
        );
        expect(refused.some((line) => line.includes('[2].name'))).toBe(true);
      }
      const leaders = await leadersByFeed(test.database, ['west', 'east']);
      expect([...leaders.values()].every((pid) => pid !== null)).toBe(true);

      // 4. west removed, read on SIGHUP: its leader releases it, nobody takes it, its data stays
      writeFileSync(join(dir, 'config', `..v${version}`, 'feeds.json'), JSON.stringify([eastFeed()]));
      for (const replica of replicas) replica.child.kill('SIGHUP');
      for (const port of ports)
        await waitFor(
          async () => (await readyFeeds(port)).join() === 'east' && /^intake_sync_feeds_reload_failed 0$/m.test(await metricsOf(port)),
          { timeoutMs: WAIT_MS, what: 'west gone from every replica, the reload a success' },
        );
      await waitFor(async () => (await leadersByFeed(test.database, ['west'])).get('west') === null, {
        timeoutMs: WAIT_MS,
        what: "west's lease released",
      });
      expect(await delivered('west')).toBe(COUNT);

      // no restart: both processes ran throughout, and stop cleanly; no secret was ever logged
      for (const replica of replicas) {
        expect(replica.child.exitCode).toBeNull();
        const logs = JSON.stringify(replica.logs());
        expect(logs).not.toContain('not-the-secret');
        expect(logs).not.toContain(east.credentials[1]?.secret ?? '-');
        replica.child.kill('SIGTERM');
      }
      expect(await Promise.all(replicas.map((r) => r.exited))).toEqual([0, 0]);
    },
    6 * WAIT_MS,
  ); // six waits on the replicas, each bounded by WAIT_MS: a loaded machine takes minutes, a quiet one 9 s
});

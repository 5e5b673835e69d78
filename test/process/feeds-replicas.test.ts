import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/sandbox/clock.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { connectionsOf, leadersByFeed, writeFeedsFile } from '../support/process/feed-fleet.js';
import { waitFor } from '../support/wait-for.js';
import { spawnCli, stopProcesses, type WorkerProcess } from '../support/process/worker-process.js';

const hasPostgres = await postgresReachable();
const LEASE_RETRY_MS = 250;
const LEASE_TTL_MS = 3_000;
const FEEDS = ['a1', 'a2', 'b1', 'b2'];

/**
 * Replicas spread the feeds (4 feeds on 2 simulators, 2 replicas): a replica that joins gets its
 * share from the one that held them all, and a replica killed with SIGKILL has its feeds taken
 * over within the lease TTL. Each replica keeps one lock connection.
 */
describe.skipIf(!hasPostgres)(`replicas spread the feeds (${NEEDS_POSTGRES})`, () => {
  let test: TestDatabase;
  let a: Sandbox;
  let b: Sandbox;
  let dir: string;
  let env: Record<string, string>;
  const children: WorkerProcess[] = [];

  function start(): WorkerProcess {
    const worker = spawnCli(['run'], env);
    children.push(worker);
    return worker;
  }

  /** How many feeds each process leads (pid -> count); feeds nobody leads under `null`. */
  async function spread(): Promise<Map<number | null, number>> {
    const counts = new Map<number | null, number>();
    for (const pid of (await leadersByFeed(test.database, FEEDS)).values()) counts.set(pid, (counts.get(pid) ?? 0) + 1);
    return counts;
  }

  beforeAll(async () => {
    test = await createTestDatabase('runtime_feed_replicas');
    dir = mkdtempSync(join(tmpdir(), 'feeds-replicas-'));
    const credentials = (prefix: string) => [1, 2].map((i) => ({ key: `${prefix}-key-${i}`, secret: `${prefix}-secret-${i}-0123456789` }));
    a = await startSandbox({ clock: new ManualClock(), credentials: credentials('a') });
    b = await startSandbox({ clock: new ManualClock(), credentials: credentials('b') });
    const file = writeFeedsFile(dir, [
      { name: 'a1', sandbox: a, credential: 0 },
      { name: 'a2', sandbox: a, credential: 1 },
      { name: 'b1', sandbox: b, credential: 0 },
      { name: 'b2', sandbox: b, credential: 1 },
    ]);
    env = {
      DATABASE_URL: test.url ?? '',
      FEEDS_FILE: file,
      POLL_INTERVAL_MS: '100',
      LEASE_RETRY_MS: String(LEASE_RETRY_MS),
      LEASE_TTL_MS: String(LEASE_TTL_MS),
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: '0',
      SHUTDOWN_GRACE_MS: '5000',
    };
  });
  afterEach(() => stopProcesses(children));
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await test?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a lone replica leads every feed; a second one gets half; kill -9 of one and the other takes its feeds within the TTL', async () => {
    const first = start();
    const firstPid = first.child.pid ?? -1;
    await waitFor(async () => (await spread()).get(firstPid) === FEEDS.length, {
      timeoutMs: 30_000,
      what: 'the lone replica to lead all 4 feeds',
    });

    const second = start();
    const secondPid = second.child.pid ?? -1;
    // the first gives up one feed per check above its share (ceil(4 / 2) = 2); the second takes them
    await waitFor(
      async () => {
        const counts = await spread();
        return counts.get(firstPid) === 2 && counts.get(secondPid) === 2;
      },
      { timeoutMs: 30_000, what: 'the feeds to spread 2 and 2' },
    );
    // one lock connection per replica, whatever the number of feeds it leads
    expect((await connectionsOf(test.database, firstPid)).lease).toBe(1);
    expect((await connectionsOf(test.database, secondPid)).lease).toBe(1);

    const killedAt = Date.now();
    first.child.kill('SIGKILL');
    await waitFor(async () => (await spread()).get(secondPid) === FEEDS.length, {
      timeoutMs: LEASE_TTL_MS + 10_000,
      what: 'the survivor to lead all 4 feeds',
    });
    const takeoverMs = Date.now() - killedAt;
    process.stdout.write(
      `[feeds-replicas] takeover of 2 feeds after kill -9: ${takeoverMs} ms (TTL ${LEASE_TTL_MS} ms, retry ${LEASE_RETRY_MS} ms)\n`,
    );
    expect(takeoverMs).toBeLessThan(LEASE_TTL_MS);

    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect([...(await spread()).keys()]).toEqual([null]);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/sandbox/clock.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadCheckpoint } from '../../src/sync/poll/checkpoint.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { connectionsOf, writeFeedsFile } from '../support/process/feed-fleet.js';
import { waitFor } from '../support/wait-for.js';
import { spawnCli, stopProcesses, type WorkerProcess } from '../support/process/worker-process.js';

const hasPostgres = await postgresReachable();
const MAX_FEEDS = 20;
const EVENTS_PER_FEED = 40;
// the pool (4) and the page connection (1) are per process, not per feed; the lock session is one
const MAX_OTHER = 5;

/**
 * What N feeds cost in connections: one process running 1 and then 20 feeds (one simulator, one
 * account each, every account with a backlog), pg_stat_activity sampled by application_name while
 * it drains every feed and answers /metrics (which reads every feed's quarantine and outbox).
 */
describe.skipIf(!hasPostgres)(`connections per process (${NEEDS_POSTGRES})`, () => {
  let test: TestDatabase;
  let sandbox: Sandbox;
  let dir: string;
  const children: WorkerProcess[] = [];

  beforeAll(async () => {
    test = await createTestDatabase('runtime_feed_connections');
    dir = mkdtempSync(join(tmpdir(), 'feeds-connections-'));
    const credentials = Array.from({ length: MAX_FEEDS + 1 }, (_, i) => ({ key: `key-${i}`, secret: `secret-${i}-0123456789` }));
    sandbox = await startSandbox({ clock: new ManualClock(), credentials });
    // every step already due: each account has a backlog of EVENTS_PER_FEED events (10 prescriptions x 4 steps)
    for (const c of credentials) sandbox.store.seedBulk({ key: c.key, count: EVENTS_PER_FEED / 4, rejectEvery: 1_000, prefix: c.key });
  });
  afterEach(() => stopProcesses(children));
  afterAll(async () => {
    await sandbox?.close();
    await test?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    // feeds 1..20 use credentials 1..20; the single feed, credential 0 (each run drains a fresh backlog)
    [1, 0],
    [MAX_FEEDS, 1],
  ])('%i feed(s): one lock connection, at most 5 others', async (count, firstCredential) => {
    const names = Array.from({ length: count }, (_, i) => `f${count}-${i}`);
    const file = writeFeedsFile(
      dir,
      names.map((name, i) => ({ name, sandbox, credential: firstCredential + i })),
    );
    const daemon = spawnCli(['run'], {
      DATABASE_URL: test.url ?? '',
      FEEDS_FILE: file,
      PAGE_LIMIT: '5',
      POLL_INTERVAL_MS: '100',
      LEASE_RETRY_MS: '250',
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: '0',
    });
    children.push(daemon);
    const pid = daemon.child.pid ?? -1;
    const peak = { lease: 0, other: 0 };
    const sample = async () => {
      const now = await connectionsOf(test.database, pid);
      peak.lease = Math.max(peak.lease, now.lease);
      peak.other = Math.max(peak.other, now.other);
    };
    let port = 0;
    // every feed drained: its checkpoint has taken all its pages (PAGE_LIMIT 5: 8 pages of events)
    await waitFor(
      async () => {
        await sample();
        port = Number(daemon.logs().find((l) => l.component === 'health' && typeof l.port === 'number')?.port ?? 0);
        const versions = await Promise.all(names.map(async (feed) => (await loadCheckpoint(test.database.db, feed)).version));
        return port > 0 && versions.every((v) => v >= EVENTS_PER_FEED / 5);
      },
      { timeoutMs: 60_000, what: `all ${count} feeds to drain`, intervalMs: 20 },
    );
    // scrapes read every feed's quarantine and outbox from the pool, side by side
    for (let i = 0; i < 3; i++) {
      const [metrics] = await Promise.all([fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text()), sample()]);
      expect(metrics).toContain(`intake_sync_leader{feed="${names.at(-1)}"} 1`);
    }
    await sample();
    process.stdout.write(`[feeds-connections] ${count} feed(s): peak ${peak.lease} lock + ${peak.other} other connection(s)\n`);
    expect(peak.lease).toBe(1);
    expect(peak.other).toBeGreaterThan(0);
    expect(peak.other).toBeLessThanOrEqual(MAX_OTHER);
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
  });
});

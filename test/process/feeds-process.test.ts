import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/connection.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { sampleIdentity } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { leaseHolder } from '../../src/sync/leadership/lease.js';
import { registerLocalPrescriptions } from '../../src/sync/matching/local-prescriptions.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { waitFor } from '../support/wait-for.js';
import { spawnCli, stopProcesses, type WorkerProcess } from '../support/process/worker-process.js';

const hasPostgres = await postgresReachable();
const COUNT = 30;

/**
 * One process, several feeds (FEEDS_FILE), each on its own simulator: a feed whose credentials
 * the operator refuses (401) stops alone, in its own health detail and metrics, while the other
 * drains; both share one lock connection.
 */
describe.skipIf(!hasPostgres)(`several feeds in one process (${NEEDS_POSTGRES})`, () => {
  let test: TestDatabase;
  let west: Sandbox;
  let east: Sandbox;
  let dir: string;
  const children: WorkerProcess[] = [];

  const baseEnv = () => ({
    DATABASE_URL: test.url ?? '',
    PAGE_LIMIT: '5',
    POLL_INTERVAL_MS: '50',
    LEASE_RETRY_MS: '200',
    HEALTH_HOST: '127.0.0.1',
    HEALTH_PORT: '0',
  });

  function start(args: string[], env: Record<string, string>): WorkerProcess {
    const worker = spawnCli(args, env);
    children.push(worker);
    return worker;
  }

  /** A FEEDS_FILE naming both simulators; east's secret comes from the environment (env:EAST_SECRET). */
  function feedsFile(name: string): string {
    const path = join(dir, name);
    const [w] = west.credentials;
    const e = east.credentials[1];
    writeFileSync(
      path,
      JSON.stringify([
        { name: 'west', base_url: west.baseUrl, api_key: w?.key, api_secret: w?.secret },
        { name: 'east', base_url: east.baseUrl, api_key: e?.key, api_secret: 'env:EAST_SECRET' },
      ]),
    );
    return path;
  }

  const statuses = (feed: string) =>
    queryRows<{ status: string; n: number }>(
      test.database.db,
      sql`select status, count(*)::int as n from intake_sync.prescriptions where feed = ${feed} group by status order by status`,
    );

  beforeAll(async () => {
    test = await createTestDatabase('runtime_feeds');
    dir = mkdtempSync(join(tmpdir(), 'feeds-process-'));
    west = await startSandbox({ clock: new ManualClock() });
    // event ids are unique per deployment, not per feed (events.id): a simulator numbers its events by
    // tenant, so east's account is its second tenant, and its ids differ from west's first tenant's
    east = await startSandbox({
      clock: new ManualClock(),
      credentials: [
        { key: 'east-unused', secret: 'east-unused-secret' },
        { key: 'east-key', secret: 'east-secret-0123456789' },
      ],
    });
    // the same identities on both operators: a feed's events match only its own prescriptions
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

  it('a feed refused with 401 stops in its own /readyz detail and metrics; the other drains; one lock connection', async () => {
    const daemon = start(['run'], {
      ...baseEnv(),
      FEEDS_FILE: feedsFile('bad-east.json'),
      EAST_SECRET: 'not-the-secret',
      SHUTDOWN_GRACE_MS: '5000',
    });
    let port = 0;
    await waitFor(
      () => {
        port = Number(daemon.logs().find((l) => l.component === 'health' && typeof l.port === 'number')?.port ?? 0);
        return port > 0;
      },
      { timeoutMs: 30_000, what: 'the health endpoint' },
    );
    await waitFor(async () => (await statuses('west')).some((r) => r.status === 'delivered' && r.n === COUNT), {
      timeoutMs: 30_000,
      what: 'feed west to deliver every prescription',
    });
    type Ready = { status: string; reasons: string[]; feeds: Record<string, { status: string; role: string; reasons: string[] }> };
    let ready: Ready | undefined;
    await waitFor(
      async () => {
        const response = await fetch(`http://127.0.0.1:${port}/readyz`);
        ready = (await response.json()) as Ready;
        return response.status === 503 && ready.reasons.some((r) => r.startsWith('feed east: stopped consuming: '));
      },
      { timeoutMs: 20_000, what: '/readyz to name feed east as stopped' },
    );
    expect(ready?.feeds.west).toMatchObject({ status: 'ready', role: 'leader', reasons: [] });
    expect(ready?.feeds.east?.status).toBe('not ready');
    // only east's reason, never the secret
    expect(ready?.reasons.every((r) => r.startsWith('feed east: '))).toBe(true);
    expect(JSON.stringify(ready)).not.toContain('not-the-secret');
    // a 401 is the feed's state, not a dead process
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);

    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toContain('intake_sync_consuming_stopped{feed="east"} 1');
    expect(metrics).toContain('intake_sync_consuming_stopped{feed="west"} 0');
    expect(metrics).toMatch(/intake_sync_upstream_failures_total\{feed="east",reason="unauthorized"\} [1-9]/);
    expect(metrics).toContain('intake_sync_upstream_failures_total{feed="west",reason="unauthorized"} 0');
    expect(metrics).toMatch(/intake_sync_pages_total\{feed="west"\} [1-9]/);
    expect(metrics).toContain('intake_sync_pages_total{feed="east"} 0');

    // nothing of east applied, nothing matched across feeds
    expect(await statuses('east')).toEqual([{ status: null, n: COUNT }]);
    // one lock session for both feeds
    const sessions = await queryRows<{ lease: number }>(
      test.database.db,
      sql`select count(*)::int as lease from pg_stat_activity where application_name like ${`intake-sync[${daemon.child.pid}] lease%`}`,
    );
    expect(sessions[0]?.lease).toBe(1);

    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    expect(await leaseHolder(test.database, 'west')).toBeNull();
    expect(await leaseHolder(test.database, 'east')).toBeNull();
  });

  it('run --once drains every feed and prints one summary per feed', async () => {
    const e = east.credentials[1];
    const once = start(['run', '--once', '--json'], { ...baseEnv(), FEEDS_FILE: feedsFile('good.json'), EAST_SECRET: e?.secret ?? '' });
    expect(await once.exited).toBe(0);
    const lines = once
      .stdout()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { feed: string; drained: boolean });
    expect(lines.map((l) => [l.feed, l.drained]).sort()).toEqual([
      ['east', true],
      ['west', true],
    ]);
    expect(await statuses('east')).toEqual([{ status: 'delivered', n: COUNT }]);
    expect(await statuses('west')).toEqual([{ status: 'delivered', n: COUNT }]);
  });

  it('a bad FEEDS_FILE exits 2 naming the file and field, before anything runs', async () => {
    const path = join(dir, 'bad.json');
    writeFileSync(path, JSON.stringify([{ name: 'west', base_url: west.baseUrl, api_key: 'k', api_secret: 'env:NOT_SET_ANYWHERE' }]));
    const refused = start(['run', '--once'], { ...baseEnv(), FEEDS_FILE: path });
    expect(await refused.exited).toBe(2);
    const text = refused
      .logs()
      .map((l) => String(l.raw ?? ''))
      .join('\n');
    expect(text).toContain(`FEEDS_FILE: ${path} [0].api_secret: names the environment variable NOT_SET_ANYWHERE, which is not set`);
  });
});

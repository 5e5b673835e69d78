import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/connection.js';
import { registerFeeds } from '../../src/db/feed-registry.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { sampleIdentity } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { registerLocalPrescriptions } from '../../src/sync/matching/local-prescriptions.js';
import { cliBudget, runCli } from '../support/cli/run-cli.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { waitFor } from '../support/wait-for.js';
import { spawnCli, stopProcesses, type WorkerProcess } from '../support/process/worker-process.js';

const hasPostgres = await postgresReachable();
const COUNT = 20;
const WAIT_MS = 45_000;

/**
 * `feeds pause` before the daemon starts: while the other feed drains, the paused feed sends its
 * operator no request, its paused gauge carries the reason, and `feeds list` shows it paused with a
 * leader; `feeds resume` and it drains, with no restart. An app role cannot pause.
 */
describe.skipIf(!hasPostgres)(`feeds pause, list and resume (${NEEDS_POSTGRES})`, () => {
  let test: TestDatabase;
  let west: Sandbox;
  let east: Sandbox;
  let dir: string;
  const children: WorkerProcess[] = [];

  const delivered = async (feed: string) =>
    (
      await queryRows<{ n: number }>(
        test.database.db,
        sql`select count(*)::int as n from intake_sync.prescriptions where feed = ${feed} and status = 'delivered'`,
      )
    )[0]?.n ?? 0;
  const eventRequests = (sandbox: Sandbox) =>
    [...sandbox.store.apiRequests.values()].reduce((n, byResource) => n + (byResource.get('events') ?? 0), 0);

  beforeAll(async () => {
    test = await createTestDatabase('runtime_feeds_pause');
    dir = mkdtempSync(join(tmpdir(), 'feeds-pause-'));
    west = await startSandbox({ clock: new ManualClock() });
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
    await registerFeeds(test.database.db, ['west', 'east'], null);
  });
  afterEach(() => stopProcesses(children));
  afterAll(async () => {
    await west?.close();
    await east?.close();
    await test?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'a paused feed polls nothing while the other drains; feeds list shows it; resumed, it drains',
    async () => {
      const file = join(dir, 'feeds.json');
      writeFileSync(
        file,
        JSON.stringify([
          { name: 'west', base_url: west.baseUrl, api_key: west.credentials[0]?.key, api_secret: west.credentials[0]?.secret },
          { name: 'east', base_url: east.baseUrl, api_key: east.credentials[1]?.key, api_secret: east.credentials[1]?.secret },
        ]),
      );
      const env = {
        DATABASE_URL: test.url ?? '',
        FEEDS_FILE: file,
        PAGE_LIMIT: '5',
        POLL_INTERVAL_MS: '100',
        LEASE_RETRY_MS: '250',
        LEASE_TTL_MS: '3000',
        HEALTH_HOST: '127.0.0.1',
        HEALTH_PORT: '0',
      };
      const bad = await runCli(['feeds', 'pause', '--feed', 'east', '--reason', 'Operator Review'], env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--reason: must be a code');
      const paused = await runCli(['feeds', 'pause', '--feed', 'east', '--reason', 'operator_review', '--json'], env);
      expect(paused.code).toBe(0);
      expect(JSON.parse(paused.stdout)).toEqual({ feed: 'east', paused: true, reason: 'operator_review', was_paused: false });

      const daemon = spawnCli(['run'], env);
      children.push(daemon);
      let port = 0;
      await waitFor(
        () => {
          port = Number(daemon.logs().find((l) => l.component === 'health' && typeof l.port === 'number')?.port ?? 0);
          return port > 0;
        },
        { timeoutMs: WAIT_MS, what: 'the health endpoint' },
      );
      await waitFor(async () => (await delivered('west')) === COUNT, { timeoutMs: WAIT_MS, what: 'feed west to deliver' });
      await waitFor(
        () =>
          daemon.logs().some((l) => l.feed === 'east' && l.msg === 'the feed is paused (feeds pause): holding its lease, polling nothing'),
        {
          timeoutMs: WAIT_MS,
          what: 'east held paused',
        },
      );
      // west drained in many polls; east was asked nothing
      expect(eventRequests(west)).toBeGreaterThan(COUNT / 5);
      expect(eventRequests(east)).toBe(0);
      expect(await delivered('east')).toBe(0);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toMatch(/^intake_sync_feed_paused\{feed="east",reason="operator_review"\} 1$/m);
      expect(metrics).toMatch(/^intake_sync_feed_paused\{feed="west",reason=""\} 0$/m);

      const list = await runCli(['feeds', 'list', '--json'], env);
      expect(list.code).toBe(0);
      const rows = list.stdout
        .trim()
        .split('\n')
        .map(
          (line) =>
            JSON.parse(line) as { feed: string; state: string; why: string | null; leader: string | null; paused_by: string | null },
        );
      expect(rows.map((r) => [r.feed, r.state, r.why])).toEqual([
        ['east', 'paused', 'operator_review'],
        ['west', 'running', null],
      ]);
      for (const row of rows) expect(row.leader).toMatch(new RegExp(`^intake-sync\\[${daemon.child.pid}\\]`));
      const text = await runCli(['feeds', 'list'], env);
      expect(text.stdout).toMatch(/east\s+paused\s+operator_review/);

      const resumed = await runCli(['feeds', 'resume', '--feed', 'east'], env);
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toContain('feed east resumed');
      await waitFor(async () => (await delivered('east')) === COUNT, { timeoutMs: WAIT_MS, what: 'feed east to deliver after the resume' });

      const audit = await queryRows<{ action: string; feed: string }>(
        test.database.db,
        sql`select action, feed from intake_sync.audit_entries where action like 'feed.%' order by id`,
      );
      expect(audit).toEqual([
        { action: 'feed.pause', feed: 'east' },
        { action: 'feed.resume', feed: 'east' },
      ]);
      daemon.child.kill('SIGTERM');
      expect(await daemon.exited).toBe(0);
    },
    cliBudget(5, 3 * WAIT_MS),
  );
});

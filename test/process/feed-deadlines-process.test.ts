import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/connection.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { spawnCli, stopProcesses, type WorkerProcess } from '../support/process/worker-process.js';

const hasPostgres = await postgresReachable();

/**
 * Issue 28: the real `run` writes each feed's stage deadlines (feed_deadlines, what
 * overdue_prescriptions reads) from OVERDUE_* and a feed's own FEEDS_FILE `overdue`, and a start with
 * other settings replaces them.
 */
describe.skipIf(!hasPostgres)(`run writes feed_deadlines (${NEEDS_POSTGRES})`, () => {
  let test: TestDatabase;
  let sandbox: Sandbox;
  let dir: string;
  const children: WorkerProcess[] = [];

  beforeAll(async () => {
    test = await createTestDatabase('feed_deadlines_run');
    dir = mkdtempSync(join(tmpdir(), 'feed-deadlines-'));
    sandbox = await startSandbox({
      clock: new ManualClock(),
      credentials: [
        { key: 'west-key', secret: 'west-secret-0123456789' },
        { key: 'east-key', secret: 'east-secret-0123456789' },
      ],
    });
  }, 120_000);
  afterAll(async () => {
    await stopProcesses(children);
    await sandbox?.close();
    await test?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function runOnce(env: Record<string, string>): Promise<void> {
    const path = join(dir, 'feeds.json');
    writeFileSync(
      path,
      JSON.stringify([
        { name: 'west', base_url: sandbox.baseUrl, api_key: 'west-key', api_secret: 'west-secret-0123456789' },
        {
          name: 'east',
          base_url: sandbox.baseUrl,
          api_key: 'east-key',
          api_secret: 'east-secret-0123456789',
          overdue: { accepted: '12h', dispensed: 'off' },
        },
      ]),
    );
    const worker = spawnCli(['run', '--once'], {
      DATABASE_URL: test.url ?? '',
      FEEDS_FILE: path,
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: '0',
      ...env,
    });
    children.push(worker);
    const code = await worker.exited;
    expect(code, JSON.stringify(worker.logs().slice(-5))).toBe(0);
  }

  const deadlines = async () =>
    Object.fromEntries(
      (
        await queryRows<{ feed: string; stage: string; seconds: number | null }>(
          test.database.db,
          sql`select feed, stage, extract(epoch from deadline)::int as seconds from intake_sync.feed_deadlines`,
        )
      ).map((r) => [`${r.feed}/${r.stage}`, r.seconds]),
    );

  it("from OVERDUE_* and each feed's override, replaced by the next start's settings", async () => {
    await runOnce({ OVERDUE_SENT: '3h' });
    expect(await deadlines()).toEqual({
      'west/sent': 3 * 3600,
      'west/accepted': 24 * 3600,
      'west/ordered': 48 * 3600,
      'west/dispensed': 72 * 3600,
      'west/cancel_requested': 48 * 3600,
      'east/sent': 3 * 3600,
      'east/accepted': 12 * 3600,
      'east/ordered': 48 * 3600,
      'east/dispensed': null,
      'east/cancel_requested': 48 * 3600,
    });
    await runOnce({ OVERDUE_SENT: '5h', OVERDUE_ORDERED: 'off' });
    const after = await deadlines();
    expect(after['west/sent']).toBe(5 * 3600);
    expect(after['west/ordered']).toBeNull();
    expect(after['east/accepted']).toBe(12 * 3600);
    expect(after['east/sent']).toBe(5 * 3600);
  }, 180_000);
});

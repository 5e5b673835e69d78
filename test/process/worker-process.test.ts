import { sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../src/db/connection.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { sampleIdentity, seedRejects } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadCheckpoint } from '../../src/sync/poll/checkpoint.js';
import { leaseHolder } from '../../src/sync/leadership/lease.js';
import { registerLocalPrescriptions } from '../../src/sync/matching/local-prescriptions.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { waitFor } from '../support/wait-for.js';
import { spawnCli, stopProcesses, type WorkerProcess } from '../support/process/worker-process.js';

const hasPostgres = await postgresReachable();
const COUNT = 400;
const REJECT_EVERY = 7;
const PREFIX = 'proc';

describe.skipIf(!hasPostgres)(`worker process (${NEEDS_POSTGRES})`, () => {
  let test: TestDatabase;
  let sandbox: Sandbox;
  let env: Record<string, string>;
  const children: WorkerProcess[] = [];
  let expectedEvents = 0;

  function start(args: string[], extra: Record<string, string> = {}): WorkerProcess {
    const worker = spawnCli(args, { ...env, ...extra });
    children.push(worker);
    return worker;
  }

  beforeAll(async () => {
    test = await createTestDatabase('runtime_process');
    sandbox = await startSandbox({ clock: new ManualClock() });
    const [credential] = sandbox.credentials;
    // every step of every prescription already due: one long backlog
    expectedEvents = sandbox.store.seedBulk({ count: COUNT, rejectEvery: REJECT_EVERY, prefix: PREFIX }).events;
    await registerLocalPrescriptions(
      test.database.db,
      Array.from({ length: COUNT }, (_, i) => ({ external_id: `${PREFIX}-${i}`, prescription_identity: sampleIdentity(i) })),
    );
    env = {
      DATABASE_URL: test.url ?? '',
      INTAKE_API_BASE_URL: sandbox.baseUrl,
      INTAKE_API_KEY: credential?.key ?? '',
      INTAKE_API_SECRET: credential?.secret ?? '',
      PAGE_LIMIT: '5',
      POLL_INTERVAL_MS: '50',
      LEASE_RETRY_MS: '200',
      HEALTH_HOST: '127.0.0.1',
      HEALTH_PORT: '0',
    };
  });
  afterEach(() => stopProcesses(children));
  afterAll(async () => {
    await sandbox?.close();
    await test?.drop();
  });

  it('killed with SIGKILL mid-drain and restarted: exact final statuses and history, no duplicates', async () => {
    const first = start(['run', '--once', '--json']);
    await waitFor(async () => (await loadCheckpoint(test.database.db, 'default')).version >= 20, {
      timeoutMs: 20_000,
      what: 'the first worker to commit 20 pages',
    });
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    const [{ count: partial } = { count: 0 }] = await queryRows<{ count: number }>(
      test.database.db,
      sql`select count(*)::int as count from intake_sync.events`,
    );
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(expectedEvents);

    const second = start(['run', '--once', '--json']);
    expect(await second.exited).toBe(0);
    const summary = JSON.parse(second.stdout()) as { drained: boolean; inserted: number };
    expect(summary.drained).toBe(true);
    // the second run applied exactly what the first did not commit
    expect(summary.inserted).toBe(expectedEvents - partial);

    const rows = await queryRows<{ external_id: string; status: string; events: number }>(
      test.database.db,
      sql`select p.external_id, p.status, (select count(*)::int from intake_sync.events e where e.prescription_id = p.id) as events
            from intake_sync.prescriptions p`,
    );
    expect(rows).toHaveLength(COUNT);
    for (const row of rows) {
      const i = Number(row.external_id.slice(PREFIX.length + 1));
      const rejected = seedRejects(i, REJECT_EVERY);
      expect([row.external_id, row.status, row.events]).toEqual([row.external_id, rejected ? 'rejected' : 'delivered', rejected ? 1 : 4]);
    }
    const [totals] = await queryRows<{ events: number; quarantined: number }>(
      test.database.db,
      sql`select (select count(*)::int from intake_sync.events) as events, (select count(*)::int from intake_sync.quarantine) as quarantined`,
    );
    expect(totals).toEqual({ events: expectedEvents, quarantined: 0 });
  });

  it('SIGTERM: exits 0 within the grace period and releases the lease', async () => {
    const daemon = start(['run'], { SHUTDOWN_GRACE_MS: '5000' });
    let port = 0;
    await waitFor(
      () => {
        const line = daemon.logs().find((l) => l.component === 'health' && typeof l.port === 'number');
        port = Number(line?.port ?? 0);
        return port > 0;
      },
      { timeoutMs: 20_000, what: 'the health endpoint' },
    );
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, { timeoutMs: 10_000, what: '/readyz 200' });
    expect(await leaseHolder(test.database, 'default')).not.toBeNull();

    const signalledAt = Date.now();
    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(5_000);
    expect(await leaseHolder(test.database, 'default')).toBeNull();
    expect(daemon.logs().some((l) => l.msg === 'stopped')).toBe(true);
  });

  it('refuses the embedded fallbacks when INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG=1', async () => {
    const refused = start(['run', '--once'], { DATABASE_URL: '', INTAKE_API_BASE_URL: '', INTAKE_SYNC_REQUIRE_EXPLICIT_CONFIG: '1' });
    expect(await refused.exited).toBe(2);
    const text = refused
      .logs()
      .map((l) => String(l.raw ?? ''))
      .join('\n');
    expect(text).toMatch(/INTAKE_API_BASE_URL: is required here/);
    expect(text).toMatch(/DATABASE_URL: is required here/);
  });
});

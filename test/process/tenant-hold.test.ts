import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { grantsScript } from '../../src/db/grants-script.js';
import { queryRows } from '../../src/db/connection.js';
import { registerFeeds } from '../../src/db/feed-registry.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { identityOf, samplePrescription, sampleIdentity } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { applyPage } from '../../src/sync/apply/apply-page.js';
import { registerLocalPrescriptions } from '../../src/sync/matching/local-prescriptions.js';
import { loadCheckpoint } from '../../src/sync/poll/checkpoint.js';
import { event } from '../support/sync/fixtures.js';
import { ADMIN_URL, createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../support/db.js';
import { spawnCli, stopProcesses, type WorkerProcess } from '../support/process/worker-process.js';
import { roleTagStatement } from '../support/test-run.js';

const hasPostgres = await postgresReachable();
const COUNT = 30;

/**
 * Issue 33 §1: an app role of feed `west` holds its feed's change clock and match lock (a
 * registration that changed a status, then SET CONSTRAINTS ALL IMMEDIATE, in a transaction left open)
 * while the real daemon's `run --once` drains feed `east`: the drain ends exact. Before 0027 the
 * stamp's global change_clock lock stalled every feed's pages for as long as the hold lasted.
 */
describe.skipIf(!hasPostgres)(`an app holding its feed's locks does not stall another feed's daemon (${NEEDS_POSTGRES})`, () => {
  let test: TestDatabase;
  let sandbox: Sandbox;
  let dir: string;
  let admin: postgres.Sql;
  const role = `intake_hold_west_${randomBytes(4).toString('hex')}`;
  const children: WorkerProcess[] = [];

  beforeAll(async () => {
    test = await createTestDatabase('tenant_hold');
    dir = mkdtempSync(join(tmpdir(), 'tenant-hold-'));
    sandbox = await startSandbox({ clock: new ManualClock() });
    sandbox.store.seedBulk({ count: COUNT, rejectEvery: 1_000, prefix: 'east', key: sandbox.credentials.at(-1)?.key });
    await registerFeeds(test.database.db, ['west', 'east'], null);
    await registerLocalPrescriptions(
      test.database.db,
      Array.from({ length: COUNT }, (_, k) => ({ external_id: `east-${k}`, prescription_identity: sampleIdentity(k) })),
      { feed: 'east' },
    );
    admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create role "${role}" login`);
    await admin.unsafe(roleTagStatement(role));
    const owner = postgres(test.url ?? '', { max: 1, onnotice: () => {} });
    await owner.unsafe(grantsScript('app', 'intake_sync', role, { kind: 'feeds', feeds: ['west'] }).join('\n'));
    // west has a committed status change (its clock exists) and a prescription to change again
    const p = samplePrescription(1, { prefix: 'west' });
    await owner`select intake_sync.register_prescription(${p.external_id}, ${JSON.stringify(identityOf(p))}::text::jsonb, 'west')`;
    await owner`update intake_sync.prescriptions set status = 'accepted', status_rank = 1 where feed = 'west'`;
    await owner.end({ timeout: 1 });
    // a held event of west, which the app's registration below matches (a status change of west)
    const { version } = await loadCheckpoint(test.database.db, 'west');
    await applyPage(test.database.db, {
      feed: 'west',
      expectedVersion: version,
      nextIterator: 'west-1',
      events: [event('west-held-2', 'accepted', '2024-12-10T10:00:00Z', identityOf(samplePrescription(2, { prefix: 'west' })))],
    });
  });
  afterEach(() => stopProcesses(children));
  afterAll(async () => {
    await sandbox?.close();
    await test?.drop();
    await admin?.unsafe(`drop role if exists "${role}"`);
    await admin?.end({ timeout: 5 });
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("run --once drains east exact while west's app holds west's clock and match lock", async () => {
    const url = new URL(test.url ?? '');
    url.username = role;
    const app = postgres(url.toString(), { max: 1, onnotice: () => {} });
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = () => {};
    const holding = new Promise<void>((resolve) => (held = resolve));
    const p = samplePrescription(2, { prefix: 'west' });
    const hold = app
      .begin(async (tx) => {
        await tx`select intake_sync.register_prescription(${p.external_id}, ${JSON.stringify(identityOf(p))}::text::jsonb, 'west')`;
        // it matched west's held event: a status change, stamped at once: west's clock held from here
        await tx.unsafe('set constraints all immediate');
        held();
        await released;
      })
      .catch(() => {});
    try {
      await holding;
      const feedsFile = join(dir, 'feeds.json');
      const credential = sandbox.credentials.at(-1);
      writeFileSync(
        feedsFile,
        JSON.stringify([{ name: 'east', base_url: sandbox.baseUrl, api_key: credential?.key, api_secret: credential?.secret }]),
      );
      const once = spawnCli(['run', '--once', '--json', '--wait-for-lease', '30'], {
        DATABASE_URL: test.url ?? '',
        FEEDS_FILE: feedsFile,
        PAGE_LIMIT: '5',
        POLL_INTERVAL_MS: '50',
        LEASE_RETRY_MS: '200',
        // a wait on anything the hold took would fail pages, not only slow them: the drain would not end exact
        DB_LOCK_TIMEOUT_MS: '2000',
        HEALTH_HOST: '127.0.0.1',
        HEALTH_PORT: '0',
      });
      children.push(once);
      expect(await once.exited).toBe(0);
      const lines = once
        .stdout()
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { feed: string; drained: boolean });
      // one feed: its summary line (the feed is named only when several run)
      expect(lines.map((l) => l.drained)).toEqual([true]);
      expect(JSON.stringify(once.logs())).not.toMatch(/LockWaitTimeoutError/);
      const statuses = await queryRows<{ status: string; n: number }>(
        test.database.db,
        sql`select status, count(*)::int as n from intake_sync.prescriptions where feed = 'east' group by status order by status`,
      );
      expect(statuses).toEqual([{ status: 'delivered', n: COUNT }]);
      // the hold was real and still there: west's change clock is held by the app's backend
      const [clock] = await queryRows<{ holder: string }>(
        test.database.db,
        sql`select intake_sync._lock_holder(xmax) as holder from intake_sync.change_clocks where feed = 'west'`,
      );
      expect(clock?.holder).toContain(`(role ${role},`);
      const [open] = await queryRows<{ n: number }>(
        test.database.db,
        sql`select count(*)::int as n from pg_stat_activity where usename = ${role} and state like 'idle in transaction%'`,
      );
      expect(open?.n).toBe(1);
    } finally {
      release();
      await hold;
      await app.end({ timeout: 1 });
    }
  }, 180_000);
});

import postgres from 'postgres';
import { hostname } from 'node:os';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, test } from 'vitest';
import { IntakeClient } from '../../../../src/intake/client.js';
import { ManualClock } from '../../../../src/sandbox/clock.js';
import { samplePrescription } from '../../../../src/sandbox/fixtures.js';
import { type Sandbox, startSandbox } from '../../../../src/sandbox/server.js';
import { composeWorker } from '../../../../src/sync/compose-worker.js';
import { createFeedLeases, type FeedLeases } from '../../../../src/sync/leadership/lease.js';
import { recordSentPrescription } from '../../../../src/sync/matching/sent-prescriptions.js';
import { WorkerState } from '../../../../src/sync/state/worker-state.js';
import { lagFromPage } from '../../../../src/cli/commands/status/lag.js';
import { describeCursorProblem } from '../../../../src/sync/state/cursor-problem.js';
import { leaseApplicationName, parseLeaseApplicationName } from '../../../../src/sync/leadership/lease-holder-name.js';
import { createTestDatabase, NEEDS_POSTGRES, postgresReachable, type TestDatabase } from '../../../support/db.js';
import { cliBudget, runCli } from '../../../support/cli/run-cli.js';
import { fastWorkerSettings } from '../../../support/fast-settings.js';

const MINUTE = 60_000;
const hasPostgres = await postgresReachable();

describe('status helpers', () => {
  test.each([
    [{ events: [] }, { seconds: 0, caught_up: true }],
    [{ events: [{ occurred_at: new Date(1_000_000 - 90_000).toISOString() }] }, { seconds: 90, caught_up: false }],
    [{ events: [{ name: 'x' }] }, { seconds: null, caught_up: false }],
  ])('lagFromPage(%j)', (page, expected) => {
    expect(lagFromPage(page, 1_000_000)).toMatchObject(expected);
  });

  test('the lease application_name round-trips pid and host, names no feed, and fits what Postgres keeps for a usual pod name', () => {
    const name = leaseApplicationName(123456, 'intake-sync-7d9f8b6c5d-x2x4z');
    expect(name).toBe('intake-sync[123456] lease @intake-sync-7d9f8b6c5d-x2x4z');
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(63);
    expect(parseLeaseApplicationName(name)).toEqual({ pid: 123456, host: 'intake-sync-7d9f8b6c5d-x2x4z' });
    expect(parseLeaseApplicationName('intake-sync[42] lease default')).toEqual({ pid: 42, host: null });
    expect(parseLeaseApplicationName('my-app')).toBeUndefined();
  });
});

describe.skipIf(!hasPostgres)('intake-sync status', () => {
  let clock: ManualClock;
  let sandbox: Sandbox;
  let tdb: TestDatabase;
  let client: IntakeClient;
  let leases: FeedLeases;
  let env: Record<string, string>;

  beforeAll(async () => {
    clock = new ManualClock(Date.now() - 30 * MINUTE);
    sandbox = await startSandbox({ clock });
    tdb = await createTestDatabase('status_cli');
    const [credential] = sandbox.credentials;
    client = new IntakeClient({ baseUrl: sandbox.baseUrl, apiKey: credential?.key ?? '', apiSecret: credential?.secret ?? '' });
    env = {
      DATABASE_URL: tdb.url ?? '',
      INTAKE_API_BASE_URL: sandbox.baseUrl,
      INTAKE_API_KEY: credential?.key ?? '',
      INTAKE_API_SECRET: credential?.secret ?? '',
    };
  });
  afterAll(async () => {
    await leases?.close();
    await sandbox?.close();
    await tdb?.drop();
  });

  const drain = () =>
    composeWorker({
      database: tdb.database,
      databaseUrl: tdb.url,
      client,
      settings: fastWorkerSettings({ pageLimit: 50 }),
      state: new WorkerState({ now: () => Date.now() }),
      log: pino({ level: 'silent' }),
    }).drain();

  it(
    'shows the lag (asked at the operator), the open findings by reason, and the lease holder as a daemon pid and host',
    async () => {
      const request = samplePrescription(0, { prefix: 'st' });
      await recordSentPrescription(tdb.database.db, request, await client.createPrescription(request));
      await client.createPrescription(samplePrescription(1, { prefix: 'st' })); // nobody registered it: unmatched
      clock.advance(6 * MINUTE); // both accepted, 24 minutes before now
      await drain();
      clock.advance(5 * MINUTE); // both ordered, 19 minutes before now: not applied yet

      // nothing checks this lease while the three commands run: its idle TTL outlasts them on a loaded
      // machine (at 10 s the server ended the session under load, and status found no holder)
      leases = createFeedLeases(tdb.database, { feeds: ['default'], url: tdb.url, idleTtlMs: 600_000 });
      expect(await leases.lease('default').tryAcquire()).toBe(true);

      const json = await runCli(['status', '--json'], env);
      expect(json.stderr).toBe('');
      expect(json.code).toBe(0);
      const status = JSON.parse(json.stdout);
      expect(status.leader).toMatchObject({ held: true, pid: process.pid, host: hostname() });
      expect(status.leader.backend_pid).toEqual(expect.any(Number));
      expect(status.leader.backend_pid).not.toBe(process.pid);
      expect(status.quarantine).toMatchObject({ unmatched: 1 });
      expect(status.lag.caught_up).toBe(false);
      expect(status.lag.seconds).toBeGreaterThanOrEqual(19 * 60 - 5);
      expect(status.lag.seconds).toBeLessThan(21 * 60);

      const text = await runCli(['status'], env);
      expect(text.stdout).toMatch(
        new RegExp(`^lease {11}held by intake-sync pid ${process.pid} on ${hostname()} \\(Postgres backend \\d+\\)$`, 'm'),
      );
      expect(text.stdout).toMatch(/^quarantine {6}1 open finding\(s\): unmatched 1/m);
      expect(text.stdout).toMatch(/^lag {13}1\d{3}s \(the oldest unapplied event occurred/m);

      // the worker's drain takes the lease this test held for status to show
      await leases.lease('default').release();
      await drain();
      const caughtUp = await runCli(['status'], env);
      expect(caughtUp.stdout).toMatch(/^lag {13}caught up$/m);
    },
    cliBudget(3),
  );

  it('a feed whose position the operator refuses: status says stopped, with the reason and command /readyz gives', async () => {
    const sql = postgres(tdb.url ?? '', { max: 1, onnotice: () => {} });
    try {
      const [before] = await sql<{ iterator: string | null }[]>`select iterator from intake_sync.feed_checkpoints where feed = 'default'`;
      await sql`update intake_sync.feed_checkpoints set iterator = 'not-an-iterator-the-operator-knows' where feed = 'default'`;
      try {
        const text = await runCli(['status'], env);
        expect(text.code).toBe(0);
        const expected = describeCursorProblem('default', 'refused', { at: 'not-an-iterator-the-operator-knows' });
        expect(text.stdout).toContain(`state           ${expected}`);
        expect(text.stdout).toContain('intake-sync resync --feed default');
        const json = JSON.parse((await runCli(['status', '--json'], env)).stdout) as { stopped: string | null };
        expect(json.stopped).toBe(expected);
      } finally {
        await sql`update intake_sync.feed_checkpoints set iterator = ${before?.iterator ?? null} where feed = 'default'`;
      }
      const json = JSON.parse((await runCli(['status', '--json'], env)).stdout) as { stopped: string | null };
      expect(json.stopped).toBeNull();
    } finally {
      await sql.end({ timeout: 1 });
    }
  }, 120_000);

  it('without an operator configured the lag is unknown, saying what is missing from the configuration it sees, and status still answers', async () => {
    const result = await runCli(['status'], { DATABASE_URL: env.DATABASE_URL ?? '' });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /^lag {13}unknown: INTAKE_API_BASE_URL, INTAKE_API_KEY, INTAKE_API_SECRET are not set \(DATABASE_URL is set, so `run` needs them too\)$/m,
    );
    expect(result.stdout).not.toContain('sandbox');
  }, 30_000);
});

describe.skipIf(hasPostgres)('intake-sync status', () => {
  it.skip(NEEDS_POSTGRES, () => {});
});

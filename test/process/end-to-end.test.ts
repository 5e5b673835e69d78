import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IntakeClient } from '../../src/intake/client.js';
import { databaseProbe } from '../../src/ops/database-probe.js';
import { startHealthServer, type HealthServer } from '../../src/ops/health-server.js';
import { createSyncMetrics, type SyncMetrics } from '../../src/ops/metrics.js';
import { ManualClock } from '../../src/sandbox/clock.js';
import { samplePrescription } from '../../src/sandbox/fixtures.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { loadCheckpoint, resetCheckpoint } from '../../src/sync/poll/checkpoint.js';
import { listCheckpointResets } from '../../src/operations/checkpoint/checkpoint-reads.js';
import { composeWorker, type WorkerSettings } from '../../src/sync/compose-worker.js';
import { listLocalPrescriptions } from '../../src/sync/matching/local-prescriptions.js';
import { recordSentPrescription } from '../../src/sync/matching/sent-prescriptions.js';
import { WorkerState } from '../../src/sync/state/worker-state.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { waitFor } from '../support/wait-for.js';
import { fastWorkerSettings } from '../support/fast-settings.js';

const FIVE_MINUTES = 5 * 60_000;
const silent = pino({ level: 'silent' });
const settings: WorkerSettings = fastWorkerSettings({ pageLimit: 2 });

describe('worker end to end: sandbox → Postgres', () => {
  let test: TestDatabase;
  let sandbox: Sandbox;
  let client: IntakeClient;
  const clock = new ManualClock();
  const happy = samplePrescription(1, { prefix: 'e2e' });
  const rejected = samplePrescription(2, { prefix: 'e2e', rejected: true });

  beforeAll(async () => {
    test = await createTestDatabase('runtime_e2e');
    sandbox = await startSandbox({ clock });
    const [credential] = sandbox.credentials;
    client = new IntakeClient({ baseUrl: sandbox.baseUrl, apiKey: credential?.key ?? '', apiSecret: credential?.secret ?? '' });
    for (const request of [happy, rejected]) {
      await recordSentPrescription(test.database.db, request, await client.createPrescription(request));
    }
  });
  afterAll(async () => {
    await sandbox?.close();
    await test?.drop();
  });

  function worker(state = new WorkerState({ now: () => Date.now() })) {
    return { state, worker: composeWorker({ database: test.database, databaseUrl: test.url, client, settings, state, log: silent }) };
  }

  async function statuses(): Promise<Record<string, [string | null, number]>> {
    const rows = await listLocalPrescriptions(test.database.db);
    return Object.fromEntries(rows.map((r) => [r.external_id, [r.status, r.events]]));
  }

  it('run --once drains to accepted and rejected after 5 minutes, then to delivered', async () => {
    clock.advance(FIVE_MINUTES);
    const first = await worker().worker.drain();
    expect(first).toMatchObject({ drained: true, received: 2, inserted: 2, statusChanges: 2 });
    expect(await statuses()).toEqual({ 'e2e-1': ['accepted', 1], 'e2e-2': ['rejected', 1] });

    clock.advance(3 * FIVE_MINUTES);
    const second = await worker().worker.drain();
    expect(second).toMatchObject({
      drained: true,
      received: 3,
      inserted: 3,
      quarantined: { malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 0 },
    });
    expect(await statuses()).toEqual({ 'e2e-1': ['delivered', 4], 'e2e-2': ['rejected', 1] });

    const third = await worker().worker.drain();
    expect(third).toMatchObject({ drained: true, inserted: 0 });
  });

  it('a checkpoint reset during a run is picked up, not overwritten, and replays idempotently', async () => {
    const { state, worker: daemon } = worker();
    const running = daemon.run();
    try {
      await waitFor(() => state.snapshot().role === 'leader' && state.snapshot().lastSuccessAt !== null, {
        timeoutMs: 20_000,
        what: 'a first poll',
      });
      const before = await loadCheckpoint(test.database.db, settings.feed);
      const reset = await resetCheckpoint(test.database.db, settings.feed, { to: null, by: 'runtime-test' });
      // the daemon replays the whole feed from the beginning: 5 events, all duplicates
      await waitFor(() => state.snapshot().totals.duplicates >= 5 && !state.snapshot().backlog, { timeoutMs: 20_000, what: 'the replay' });
      const after = await loadCheckpoint(test.database.db, settings.feed);
      expect(after.version).toBeGreaterThan(reset.version);
      expect(after.iterator).toBe(before.iterator);
      expect(state.snapshot().totals.inserted).toBe(0);
    } finally {
      await daemon.stop();
      await running;
    }
    expect(await listCheckpointResets(test.database.db, settings.feed)).toHaveLength(1);
    expect(await statuses()).toEqual({ 'e2e-1': ['delivered', 4], 'e2e-2': ['rejected', 1] });
  });

  describe('health endpoint', () => {
    let server: HealthServer;
    let metrics: SyncMetrics;
    let databaseUp = true;
    // the server caches its database probe (1.5 s): the test moves the server's clock past it
    let serverSkewMs = 0;
    const state = new WorkerState({ now: () => Date.now() });
    const get = async (path: string) => {
      const response = await fetch(`http://127.0.0.1:${server.port}${path}`);
      return { status: response.status, text: await response.text() };
    };

    beforeAll(async () => {
      metrics = createSyncMetrics(state, { now: () => Date.now() }, { feed: 'default', pollIntervalMs: 5_000, readyMaxPollAgeMs: 60_000 });
      const probe = databaseProbe(test.database);
      server = await startHealthServer({
        host: '127.0.0.1',
        port: 0,
        state,
        metrics,
        probeDatabase: async () => databaseUp && (await probe()),
        thresholds: { maxPollAgeMs: 60_000, maxFailures: 3 },
        clock: { now: () => Date.now() + serverSkewMs },
        log: silent,
      });
    });
    afterAll(async () => {
      await server?.close();
      metrics?.close();
    });

    it('is ready while leading and polling; metrics carry the names and no PHI', async () => {
      const { worker: runner } = worker(state);
      await runner.drain();
      state.becameLeader(); // drain() ends as 'stopped'; a daemon stays leader
      state.pageApplied(
        {
          received: 0,
          inserted: 0,
          duplicates: 0,
          statusChanges: 0,
          matched: 0,
          quarantined: { malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 0 },
          durationMs: 1,
          done: true,
        },
        { iterator: 'x', version: 1 },
        false,
      );
      expect((await get('/healthz')).status).toBe(200);
      const ready = await get('/readyz');
      expect(ready.status, ready.text).toBe(200);
      const text = (await get('/metrics')).text;
      for (const name of [
        'intake_sync_events_applied_total{feed="default"}',
        'intake_sync_events_quarantined_total{feed="default",reason="unmatched"}',
        'intake_sync_pages_total',
        'intake_sync_poll_duration_seconds_bucket',
        'intake_sync_last_success_timestamp_seconds',
        'intake_sync_consecutive_failures',
        'intake_sync_checkpoint_age_seconds',
        'intake_sync_leader{feed="default"} 1',
        'intake_sync_backlog{feed="default"} 0',
        'intake_sync_upstream_retries_total',
        'process_cpu_user_seconds_total',
      ]) {
        expect(text).toContain(name);
      }
      const phi = [
        happy.patient.first_name,
        happy.patient.last_name,
        happy.patient.dob,
        happy.patient.primary_phone,
        happy.patient.address.address1,
      ];
      for (const body of [text, ready.text, (await get('/healthz')).text]) {
        for (const value of phi) expect(body).not.toContain(value);
      }
    });

    it('backing off stays alive; too many failures, a dead database, a 401 and a stale poll each make /readyz 503 with the reason', async () => {
      for (let i = 0; i < 3; i += 1) state.pollFailed('upstream', 'UpstreamError: GET /events: 503 from the operator');
      expect((await get('/healthz')).status).toBe(200);
      let ready = await get('/readyz');
      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.text).reasons).toEqual([
        expect.stringMatching(/^3 consecutive poll failures \(last, upstream: UpstreamError/),
      ]);

      databaseUp = false;
      serverSkewMs += 2_000;
      ready = await get('/readyz');
      expect(JSON.parse(ready.text).reasons).toContain('database unreachable');
      databaseUp = true;
      serverSkewMs += 2_000;

      state.fatal('UnauthorizedError: GET /events: 401 Unauthorized');
      ready = await get('/readyz');
      expect(ready.status).toBe(503);
      expect(JSON.parse(ready.text).reasons).toContain('stopped consuming: UnauthorizedError: GET /events: 401 Unauthorized');
      expect((await get('/healthz')).status).toBe(200);
    });

    it('a stale last poll makes /readyz 503', async () => {
      const stale = new WorkerState({ now: () => Date.now() - 120_000 });
      stale.becameLeader();
      const staleServer = await startHealthServer({
        host: '127.0.0.1',
        port: 0,
        state: stale,
        metrics,
        probeDatabase: async () => true,
        thresholds: { maxPollAgeMs: 60_000, maxFailures: 3 },
        clock: { now: () => Date.now() },
        log: silent,
      });
      try {
        const response = await fetch(`http://127.0.0.1:${staleServer.port}/readyz`);
        expect(response.status).toBe(503);
        expect(((await response.json()) as { reasons: string[] }).reasons).toEqual([
          expect.stringMatching(/^no poll yet \(leader for 120s\)$/),
        ]);
      } finally {
        await staleServer.close();
      }
    });
  });
});

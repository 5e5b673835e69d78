import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { postgresReachable } from '../support/db.js';
import { CheckpointSampler, expectCheckpointSound } from '../support/faults/checkpoint-sampler.js';
import { compareSnapshots, describeDivergence, isExact } from '../support/faults/compare.js';
import { FeedPositions } from '../support/faults/feed-positions.js';
import { metricValue } from '../support/faults/health.js';
import { expectNoLeaks, secretNeedles } from '../support/faults/leaks.js';
import { startRecordingProxy, type RecordingProxy } from '../support/faults/recording-proxy.js';
import { TRANSPORT_CALM } from '../support/faults/sandbox-admin.js';
import { openScenario } from '../support/faults/scenario-kit.js';
import { readCheckpoint, snapshotStore } from '../support/faults/store.js';
import { recordSkip, runScenario } from '../support/faults/trials.js';
import { waitFor } from '../support/wait-for.js';
import { exitReport, startWorker, stopWorker, waitUntilLive, type WorkerSetup } from '../support/faults/worker.js';
import { prepareDrain, startCheckpointSampler } from '../support/drain-prelude.js';

const SCENARIO = '6. 401 mid-run (credential revoked), then a restart with the rotated secret';
/** how long the stopped worker is watched for requests and checkpoint movement */
const WATCH_MS = 4_000;
/** at most this many requests may follow the first 401 (no hot loop, no retry storm) */
const MAX_REQUESTS_AFTER_401 = 3;

const available = await postgresReachable();

describe.skipIf(!available)(SCENARIO, () => {
  test('stops consuming, says why, no hot loop, checkpoint still; resumes exact after rotation', async () => {
    await runScenario(SCENARIO, async (trial) => {
      const kit = await openScenario('unauth');
      let proxy: RecordingProxy | undefined;
      try {
        const start = await prepareDrain(kit, { count: 3_000, rejectEvery: 5, prefix: 'ua' });
        const { prepared, expected, db } = start;
        await kit.sandbox.admin.setFaults({ ...TRANSPORT_CALM, latencyMs: 80 });
        proxy = await startRecordingProxy(kit.sandbox.baseUrl);
        const sampler = startCheckpointSampler(kit, start);
        const setup: WorkerSetup = { ...kit.setup(db), api: { ...kit.sandbox, baseUrl: proxy.baseUrl } };
        const worker = await startWorker(setup);
        await waitUntilLive(worker);
        await waitFor(async () => ((await readCheckpoint(db.sql, 'default'))?.version ?? 0) >= 3, {
          what: 'a few pages applied',
          timeoutMs: 60_000,
          intervalMs: 50,
          probeErrors: 'retry',
        });

        await kit.sandbox.admin.revokeKey(kit.sandbox.key);
        const readyBody = await waitFor(
          async () => {
            const ready = await worker.health('/readyz');
            return ready.status === 503 && /401|unauthori[sz]ed|credential/i.test(ready.body) ? ready.body : undefined;
          },
          { what: 'readyz 503 naming the refused credential', timeoutMs: 30_000, intervalMs: 100, probeErrors: 'retry' },
        );
        // sampler stays off the wire while requests are counted (its reads would be 401s too)
        const sampled = await sampler.stop();
        const first401 = proxy.requests.findIndex((r) => r.outcome === 401);
        expect(first401).toBeGreaterThanOrEqual(0);
        const versionStopped = (await readCheckpoint(db.sql, 'default'))?.version;
        const requestsBefore = proxy.requests.length;
        // the measurement itself: watch a stopped worker for a fixed span
        await new Promise((resolve) => setTimeout(resolve, WATCH_MS));
        const after401 = proxy.requests.length - first401 - 1;
        expect(proxy.requests.length - requestsBefore, `requests while stopped over ${WATCH_MS} ms`).toBe(0);
        expect(after401, 'requests after the first 401').toBeLessThanOrEqual(MAX_REQUESTS_AFTER_401);
        expect((await readCheckpoint(db.sql, 'default'))?.version).toBe(versionStopped);
        expect((await worker.health('/healthz')).status, 'the process stays alive to say why').toBe(200);
        expect(metricValue((await worker.health('/metrics')).body, 'intake_sync_consuming_stopped')).toBe(1);
        const eventsWhenStopped = (await db.sql<{ n: number }[]>`select count(*)::int as n from intake_sync.events`)[0]?.n ?? 0;
        expect(eventsWhenStopped).toBeLessThan(Object.keys(expected.events).length);
        await stopWorker(worker);
        expect((await worker.child.exited).code, exitReport(worker)).toBe(0);

        // rotation: same key, new secret; a restarted worker with it finishes exact
        const rotated = `secret-${randomBytes(18).toString('hex')}`;
        kit.addNeedles(secretNeedles(kit.sandbox.key, rotated));
        await kit.sandbox.admin.addCredential(kit.sandbox.key, rotated);
        const resumedSampler = new CheckpointSampler(
          db.sql,
          'default',
          prepared.feed,
          new FeedPositions({ ...kit.sandbox, secret: rotated }, prepared.feed),
          new Set(Object.keys(expected.events)),
        );
        resumedSampler.start();
        const resumed = await startWorker({ ...setup, api: { ...setup.api, secret: rotated } });
        await waitUntilLive(resumed);
        await waitFor(
          async () => {
            const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from intake_sync.events`;
            return row?.n === Object.keys(expected.events).length;
          },
          { what: 'all events stored after the restart', timeoutMs: 120_000, intervalMs: 250, probeErrors: 'retry' },
        );
        await stopWorker(resumed);
        const resumedReport = await resumedSampler.stop();

        const divergence = compareSnapshots(expected, await snapshotStore(db.sql));
        trial.set({
          trials: 1,
          lost: divergence.lost.length,
          duplicated: divergence.duplicated.length,
          note: `${after401} requests after the first 401; readyz: ${readyBody.slice(0, 100)}`,
        });
        expect(isExact(divergence), describeDivergence(divergence)).toBe(true);
        expectCheckpointSound(sampled, resumedReport);
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        await proxy?.close();
        await kit.close();
      }
    });
  });
});

if (!available) recordSkip(SCENARIO, 'no PostgreSQL at 127.0.0.1:5432');

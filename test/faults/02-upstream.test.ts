import { describe, expect, test } from 'vitest';
import { postgresReachable } from '../support/db.js';
import { expectCheckpointSound } from '../support/faults/checkpoint-sampler.js';
import { compareSnapshots, describeDivergence, isExact } from '../support/faults/compare.js';
import { metricValue } from '../support/faults/health.js';
import { expectNoLeaks } from '../support/faults/leaks.js';
import { startRecordingProxy, type RecordedRequest, type RecordingProxy } from '../support/faults/recording-proxy.js';
import { runSeed } from '../support/faults/rng.js';
import { TRANSPORT_CALM, type FaultSettings } from '../support/faults/sandbox-admin.js';
import { openScenario } from '../support/faults/scenario-kit.js';
import { readCheckpoint, snapshotStore } from '../support/faults/store.js';
import { recordSkip, runScenario } from '../support/faults/trials.js';
import { waitFor } from '../support/wait-for.js';
import { exitReport, startWorker, stopWorker, waitUntilLive, type WorkerSetup } from '../support/faults/worker.js';
import { prepareDrain, startCheckpointSampler } from '../support/drain-prelude.js';

const SCENARIO = '2. upstream 5xx/HTML, 429 Retry-After, timeouts, resets, truncated and wrong-shape pages';
const SIGTERM_SCENARIO = '2b. SIGTERM during a backoff exits within 1 s';
const HTTP_TIMEOUT_MS = 700;

/** Each fault alone at rate 1: the worker must keep retrying and the checkpoint must not move. */
const SOLO_FAULTS: Array<{ label: string; faults: Partial<FaultSettings>; seen: (r: RecordedRequest) => boolean }> = [
  {
    label: '500/502/503 (JSON and HTML bodies)',
    faults: { errorRate: 1, retryAfterSeconds: 1 },
    seen: (r) => typeof r.outcome === 'number' && r.outcome >= 500,
  },
  { label: '429 with Retry-After: 1', faults: { rateLimitRate: 1, retryAfterSeconds: 1 }, seen: (r) => r.outcome === 429 },
  { label: 'hang past HTTP_TIMEOUT_MS', faults: { hangRate: 1 }, seen: (r) => r.outcome === 'aborted' },
  { label: 'connection reset', faults: { dropRate: 1 }, seen: (r) => r.outcome === 'reset' },
  { label: '200 with truncated JSON', faults: { truncatedRate: 1 }, seen: (r) => r.body === 'truncated' },
  { label: '200 with a page of the wrong shape', faults: { wrongShapeRate: 1 }, seen: (r) => r.body === 'wrong-shape' },
];

const isEventList = (r: RecordedRequest) => /\/events(\?|$)/.test(r.path);

const available = await postgresReachable();

describe.skipIf(!available)('2. upstream faults', () => {
  test(SCENARIO, async () => {
    await runScenario(SCENARIO, async (trial) => {
      const seed = runSeed();
      const kit = await openScenario('upstream');
      let proxy: RecordingProxy | undefined;
      try {
        const start = await prepareDrain(kit, { count: 1_500, rejectEvery: 7, prefix: 'up' });
        const { expected, db } = start;
        proxy = await startRecordingProxy(kit.sandbox.baseUrl);
        const setup: WorkerSetup = {
          ...kit.setup(db, { HTTP_TIMEOUT_MS: String(HTTP_TIMEOUT_MS) }),
          api: { ...kit.sandbox, baseUrl: proxy.baseUrl },
        };
        const sampler = startCheckpointSampler(kit, start);

        // every fault alone at rate 1 from the very first request: nothing may be applied
        await kit.sandbox.admin.setFaults({ ...TRANSPORT_CALM, ...SOLO_FAULTS[0]?.faults, seed });
        const worker = await startWorker(setup);
        await waitUntilLive(worker);
        for (const solo of SOLO_FAULTS) {
          await kit.sandbox.admin.setFaults({ ...TRANSPORT_CALM, ...solo.faults });
          const from = proxy.requests.length;
          await waitFor(() => proxy!.requests.slice(from).filter(solo.seen).length >= 2, {
            what: `two requests answered with ${solo.label}`,
            timeoutMs: 40_000,
            intervalMs: 100,
            probeErrors: 'retry',
          });
          const checkpoint = await readCheckpoint(db.sql, 'default');
          expect(checkpoint?.version ?? 0, `the checkpoint moved during ${solo.label}`).toBe(0);
        }
        const faultPhaseEnd = proxy.requests.length;

        // then all of them mixed, at rates that still let pages through
        await kit.sandbox.admin.setFaults({
          errorRate: 0.2,
          rateLimitRate: 0.05,
          retryAfterSeconds: 1,
          hangRate: 0.03,
          dropRate: 0.05,
          truncatedRate: 0.05,
          wrongShapeRate: 0.05,
          latencyMs: 5,
          latencyJitterMs: 20,
        });
        await waitFor(
          async () => {
            const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from intake_sync.events`;
            return row?.n === Object.keys(expected.events).length;
          },
          { what: 'the worker to apply the whole feed under mixed faults', timeoutMs: 120_000, intervalMs: 250, probeErrors: 'retry' },
        );
        const metrics = (await worker.health('/metrics')).body;
        await stopWorker(worker);
        expect((await worker.child.exited).code, exitReport(worker)).toBe(0);
        const report = await sampler.stop();

        const requests = proxy.requests.filter(isEventList);
        assertRetryAfterHonoured(requests);
        assertNoHotLoop(proxy.requests.slice(0, faultPhaseEnd).filter(isEventList));
        expect(metricValue(metrics, 'intake_sync_upstream_retries_total')).toBeGreaterThan(0);

        const divergence = compareSnapshots(expected, await snapshotStore(db.sql));
        trial.set({
          trials: requests.filter((r) => r.outcome !== 200 || r.body !== 'page').length,
          lost: divergence.lost.length,
          duplicated: divergence.duplicated.length,
          note: `faulty answers among ${requests.length} GET /events; seed ${seed}`,
        });
        expect(isExact(divergence), describeDivergence(divergence)).toBe(true);
        expectCheckpointSound(report);
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        await proxy?.close();
        await kit.close();
      }
    });
  });

  test(SIGTERM_SCENARIO, async () => {
    await runScenario(SIGTERM_SCENARIO, async (trial) => {
      const kit = await openScenario('sigterm');
      try {
        await kit.sandbox.admin.seed({ count: 50, prefix: 'st' });
        const db = await kit.database('main');
        const exitTimes: number[] = [];
        // a long Retry-After parks the client's retry wait; a run of 500s goes through
        // the client's retries into the poller's own failure backoff
        const waits: Array<{ faults: Partial<FaultSettings>; metric: string }> = [
          { faults: { rateLimitRate: 1, retryAfterSeconds: 30 }, metric: 'intake_sync_upstream_retries_total' },
          { faults: { rateLimitRate: 1, retryAfterSeconds: 30 }, metric: 'intake_sync_upstream_retries_total' },
          { faults: { errorRate: 1, retryAfterSeconds: 0 }, metric: 'intake_sync_consecutive_failures' },
        ];
        for (const wait of waits) {
          await kit.sandbox.admin.setFaults({ ...TRANSPORT_CALM, ...wait.faults });
          const setup = kit.setup(db, { POLL_BACKOFF_MAX_MS: '30000', SHUTDOWN_GRACE_MS: '10000' });
          exitTimes.push(await sigtermDuringBackoff(setup, wait.metric));
        }
        trial.set({ trials: exitTimes.length, note: `exit after SIGTERM: ${exitTimes.join(', ')} ms (max ${Math.max(...exitTimes)})` });
        for (const ms of exitTimes) expect(ms).toBeLessThan(1_000);
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        await kit.close();
      }
    });
  });
});

/** Starts a worker, waits until `metric` shows it is waiting out a failure, SIGTERMs it; returns ms to exit. */
async function sigtermDuringBackoff(setup: WorkerSetup, metric: string): Promise<number> {
  const worker = await startWorker(setup);
  await waitUntilLive(worker);
  await waitFor(async () => (metricValue((await worker.health('/metrics')).body, metric) ?? 0) >= 1, {
    what: `${worker.label} to be backing off (${metric} >= 1)`,
    timeoutMs: 40_000,
    intervalMs: 100,
    probeErrors: 'retry',
  });
  const sent = Date.now();
  worker.child.signal('SIGTERM');
  const exit = await worker.child.exited;
  expect(exit.code, `exit after SIGTERM; stderr tail: ${worker.child.stderr().slice(-800)}`).toBe(0);
  return exit.at - sent;
}

/** After a 429 with Retry-After: 1 the next GET /events comes no earlier than asked. */
function assertRetryAfterHonoured(requests: readonly RecordedRequest[]): void {
  const early: string[] = [];
  for (let i = 0; i + 1 < requests.length; i++) {
    const current = requests[i]!;
    const next = requests[i + 1]!;
    if (current.outcome === 429 && next.at - current.at < 950) early.push(`${next.at - current.at} ms`);
  }
  expect(early, 'requests sent before Retry-After elapsed').toEqual([]);
}

/** At 100% failure the worker backs off: never more than 10 requests in any one second. */
function assertNoHotLoop(requests: readonly RecordedRequest[]): void {
  let worst = 0;
  for (let i = 0, j = 0; i < requests.length; i++) {
    while (requests[i]!.at - requests[j]!.at >= 1_000) j++;
    worst = Math.max(worst, i - j + 1);
  }
  expect(worst, 'most GET /events in one second while every request failed').toBeLessThanOrEqual(10);
}

if (!available) {
  recordSkip(SCENARIO, 'no PostgreSQL at 127.0.0.1:5432');
  recordSkip(SIGTERM_SCENARIO, 'no PostgreSQL at 127.0.0.1:5432');
}

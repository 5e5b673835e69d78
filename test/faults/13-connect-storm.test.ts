import { describe, expect, test } from 'vitest';
import { postgresReachable } from '../support/db.js';
import { expectCheckpointSound } from '../support/faults/checkpoint-sampler.js';
import { compareSnapshots, describeDivergence, isExact } from '../support/faults/compare.js';
import { expectNoLeaks } from '../support/faults/leaks.js';
import { PostgresOutage } from '../support/faults/postgres-outage.js';
import { TRANSPORT_CALM } from '../support/faults/sandbox-admin.js';
import { openScenario, type ScenarioDatabase } from '../support/faults/scenario-kit.js';
import { readCheckpoint, snapshotStore } from '../support/faults/store.js';
import { recordSkip, runScenario } from '../support/faults/trials.js';
import { waitFor } from '../support/wait-for.js';
import { assertRunning, exitReport, startWorker, stopWorker, waitUntilLive, type WorkerProcess } from '../support/faults/worker.js';
import { prepareDrain, startCheckpointSampler } from '../support/drain-prelude.js';

const SCENARIO = "13. connections killed as they start: storms of pg_terminate_backend on the daemon's starting backends mid-drain";
const STORMS = 4;
/** how long one storm lasts: every connection the daemon opens meanwhile is killed as it starts */
const STORM_MS = 2_500;
/** a backend younger than this is one still starting (or whose client has not used it yet) */
const STARTING_MS = 300;

const available = await postgresReachable();

/**
 * Issue 23: postgres.js 3.4.9 could leave a pool connection, killed while it started, unable ever to
 * connect again (its startup message never sent: CONNECT_TIMEOUT on every attempt), and queries
 * pushed to a closing connection pending for good. The daemon must come back by itself after such a
 * storm, as after a failover or a pooler restart: its pool, page client and lease session replaced,
 * /readyz 200 again, and the drain exact.
 */
describe.skipIf(!available)('13. connect storm', () => {
  test(SCENARIO, async () => {
    await runScenario(SCENARIO, async (trial) => {
      const kit = await openScenario('connstorm');
      let outage: PostgresOutage | undefined;
      try {
        const start = await prepareDrain(kit, { count: 3_000, rejectEvery: 8, prefix: 'cs' });
        const { expected, db } = start;
        outage = new PostgresOutage(db.name);
        // slow pages keep the drain going through every storm
        await kit.sandbox.admin.setFaults({ ...TRANSPORT_CALM, latencyMs: 120 });
        const sampler = startCheckpointSampler(kit, start);
        const worker = await startWorker(kit.setup(db, { READY_MAX_FAILURES: '2' }));
        await waitUntilLive(worker);

        let killed = 0;
        let lastVersion = 0;
        for (let storm = 0; storm < STORMS; storm++) {
          lastVersion = await waitForProgress(db, lastVersion, worker);
          killed += await connectStorm(outage);
          assertRunning(worker);
        }
        expect(killed).toBeGreaterThan(STORMS);

        // after the last storm nothing touches the daemon's connections: it must get them back by itself
        await waitFor(async () => (await worker.health('/readyz')).status === 200, {
          what: 'readyz 200 after the storms',
          timeoutMs: 60_000,
          intervalMs: 200,
          probeErrors: 'retry',
        });
        await waitForDrain(db, Object.keys(expected.events).length, worker);
        await stopWorker(worker);
        expect((await worker.child.exited).code, exitReport(worker)).toBe(0);
        const report = await sampler.stop();
        const divergence = compareSnapshots(expected, await snapshotStore(db.sql));
        trial.set({
          trials: STORMS,
          lost: divergence.lost.length,
          duplicated: divergence.duplicated.length,
          note: `${STORMS} storms of ${STORM_MS} ms, ${killed} backends terminated as they started; readyz 200 and the drain exact after`,
        });
        expect(isExact(divergence), describeDivergence(divergence)).toBe(true);
        expectCheckpointSound(report);
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        await outage?.close();
        await kit.close();
      }
    });
  });
});

/**
 * One storm: every backend of the daemon is terminated, then for STORM_MS each one that starts is
 * terminated while it starts (polled every few ms), so the daemon's reconnects die mid-startup,
 * repeatedly. Returns how many backends were terminated.
 */
async function connectStorm(outage: PostgresOutage): Promise<number> {
  let killed = await outage.terminateBackends();
  const until = Date.now() + STORM_MS;
  while (Date.now() < until) {
    killed += await outage.terminateStartingBackends(STARTING_MS);
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 8));
  }
  return killed;
}

/** Waits until the checkpoint version passes `after` (the worker committed a page); returns it. */
async function waitForProgress(db: ScenarioDatabase, after: number, worker: WorkerProcess): Promise<number> {
  return waitFor(
    async () => {
      assertRunning(worker);
      const version = (await readCheckpoint(db.sql, 'default'))?.version ?? 0;
      return version > after ? version : undefined;
    },
    { what: `the checkpoint to move past version ${after}`, timeoutMs: 90_000, intervalMs: 50, probeErrors: 'retry' },
  );
}

/** Waits until every expected event is stored: within two minutes of the last storm, so a stuck client fails it. */
async function waitForDrain(db: ScenarioDatabase, events: number, worker: WorkerProcess): Promise<void> {
  await waitFor(
    async () => {
      assertRunning(worker);
      const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from intake_sync.events`;
      return row?.n === events;
    },
    { what: `${worker.label} to store all ${events} events`, timeoutMs: 120_000, intervalMs: 250, probeErrors: 'retry' },
  );
}

if (!available) recordSkip(SCENARIO, 'no PostgreSQL at 127.0.0.1:5432');

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
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

const SCENARIO = '3. Postgres goes away mid-drain (backends terminated, connections refused)';
const RESTART_SCENARIO = '3b. Postgres server restarted mid-drain';
const TERMINATIONS = 8;
const restartAllowed = process.env.FAULTS_RESTART_PG === '1';
/** how to restart the server under test; the machine's cluster by default (the PostgreSQL matrix restarts its own) */
const restartCommand = process.env.FAULTS_RESTART_PG_COMMAND;

const available = await postgresReachable();

describe.skipIf(!available)('3. Postgres goes away', () => {
  test(SCENARIO, async () => {
    await runScenario(SCENARIO, async (trial) => {
      const kit = await openScenario('pgaway');
      let outage: PostgresOutage | undefined;
      try {
        const start = await prepareDrain(kit, { count: 4_000, rejectEvery: 8, prefix: 'pg' });
        const { expected, db } = start;
        outage = new PostgresOutage(db.name);
        // slow pages keep the drain going while the database is taken away
        await kit.sandbox.admin.setFaults({ ...TRANSPORT_CALM, latencyMs: 120 });
        const sampler = startCheckpointSampler(kit, start);
        const worker = await startWorker(kit.setup(db, { READY_MAX_FAILURES: '2' }));
        await waitUntilLive(worker);

        // blips: every time the worker has committed something new, cut all its connections
        let terminations = 0;
        let lastVersion = 0;
        while (terminations < TERMINATIONS) {
          lastVersion = await waitForProgress(db, lastVersion, worker);
          // right after a blip the worker may hold no connection yet: cut the next one it opens
          await waitFor(async () => ((await outage?.terminateBackends()) ?? 0) > 0, {
            what: 'a worker backend to terminate',
            timeoutMs: 30_000,
            intervalMs: 20,
            probeErrors: 'retry',
          });
          terminations++;
        }

        // a sustained outage: the worker pauses, says why, stays alive, and resumes by itself
        await waitForProgress(db, lastVersion, worker);
        await outage.refuseConnections();
        const notReady = await waitFor(
          async () => {
            assertRunning(worker);
            const [live, ready] = await Promise.all([worker.health('/healthz'), worker.health('/readyz')]);
            return live.status === 200 && ready.status === 503 && /database/i.test(ready.body) ? ready.body : undefined;
          },
          { what: 'readyz 503 naming the database while healthz stays 200', timeoutMs: 30_000, intervalMs: 200, probeErrors: 'retry' },
        );
        const versionDuringOutage = (await readCheckpoint(db.sql, 'default'))?.version;
        await outage.acceptConnections();
        await waitFor(async () => (await worker.health('/readyz')).status === 200, {
          what: 'readyz 200 again after the database came back',
          timeoutMs: 60_000,
          intervalMs: 200,
          probeErrors: 'retry',
        });
        expect((await readCheckpoint(db.sql, 'default'))?.version ?? 0).toBeGreaterThanOrEqual(versionDuringOutage ?? 0);

        await waitForDrain(db, Object.keys(expected.events).length, worker);
        await stopWorker(worker);
        expect((await worker.child.exited).code, exitReport(worker)).toBe(0);
        const report = await sampler.stop();
        const divergence = compareSnapshots(expected, await snapshotStore(db.sql));
        trial.set({
          trials: terminations + 1,
          lost: divergence.lost.length,
          duplicated: divergence.duplicated.length,
          note: `${terminations} backend terminations + 1 refused-connections outage; readyz said ${notReady.slice(0, 120)}`,
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

  test.skipIf(!restartAllowed)(RESTART_SCENARIO, async () => {
    await runScenario(RESTART_SCENARIO, async (trial) => {
      const kit = await openScenario('pgrestart');
      try {
        const start = await prepareDrain(kit, { count: 2_000, rejectEvery: 8, prefix: 'pr' });
        const { expected, db } = start;
        await kit.sandbox.admin.setFaults({ ...TRANSPORT_CALM, latencyMs: 120 });
        const worker = await startWorker(kit.setup(db));
        await waitUntilLive(worker);
        await waitForProgress(db, 0, worker);
        if (restartCommand) await promisify(execFile)('sh', ['-c', restartCommand]);
        else await promisify(execFile)('pg_ctlcluster', ['--skip-systemctl-redirect', '15', 'main', 'restart']);
        await waitForDrain(db, Object.keys(expected.events).length, worker);
        await stopWorker(worker);
        const divergence = compareSnapshots(expected, await snapshotStore(db.sql));
        trial.set({ trials: 1, lost: divergence.lost.length, duplicated: divergence.duplicated.length });
        expect(isExact(divergence), describeDivergence(divergence)).toBe(true);
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        await kit.close();
      }
    });
  });
});

/** Waits until the checkpoint version passes `after` (the worker committed a page); returns it. */
async function waitForProgress(db: ScenarioDatabase, after: number, worker: WorkerProcess): Promise<number> {
  return waitFor(
    async () => {
      assertRunning(worker);
      const version = (await readCheckpoint(db.sql, 'default'))?.version ?? 0;
      return version > after ? version : undefined;
    },
    { what: `the checkpoint to move past version ${after}`, timeoutMs: 60_000, intervalMs: 50, probeErrors: 'retry' },
  );
}

/** Waits until every expected event is stored. */
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
if (!restartAllowed) recordSkip(RESTART_SCENARIO, 'restarts the shared server: set FAULTS_RESTART_PG=1 to run it');

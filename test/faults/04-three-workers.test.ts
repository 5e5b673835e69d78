import { describe, expect, test } from 'vitest';
import { postgresReachable } from '../support/db.js';
import { expectCheckpointSound } from '../support/faults/checkpoint-sampler.js';
import { compareSnapshots, describeDivergence, isExact } from '../support/faults/compare.js';
import { FleetMonitor } from '../support/faults/fleet-monitor.js';
import { expectNoLeaks } from '../support/faults/leaks.js';
import { PostgresOutage } from '../support/faults/postgres-outage.js';
import { TRANSPORT_CALM } from '../support/faults/sandbox-admin.js';
import { openScenario } from '../support/faults/scenario-kit.js';
import { snapshotStore } from '../support/faults/store.js';
import { recordSkip, runScenario } from '../support/faults/trials.js';
import { waitFor } from '../support/wait-for.js';
import { startWorker, stopWorker, waitUntilLive, type WorkerProcess } from '../support/faults/worker.js';
import { prepareDrain, startCheckpointSampler } from '../support/drain-prelude.js';

const SCENARIO = '4. three workers on one feed: kill -9 and SIGSTOP of the leader';
const LEASE_RETRY_MS = 250;
const LEASE_TTL_MS = 2_000;
// stated bounds: a dead leader's lock goes with its connection, so a standby
// takes over on its next retry; a frozen leader's lock session is ended by the
// server after the TTL. Three seconds of slack absorb the shared machine's noise.
const KILL_TAKEOVER_BOUND_MS = LEASE_RETRY_MS + 3_000;
const FREEZE_TAKEOVER_BOUND_MS = LEASE_TTL_MS + LEASE_RETRY_MS + 3_000;

const available = await postgresReachable();

describe.skipIf(!available)(SCENARIO, () => {
  test('one leader at a time, bounded takeover, a resumed zombie cannot commit', async () => {
    await runScenario(SCENARIO, async (trial) => {
      const kit = await openScenario('fleet');
      let monitor: FleetMonitor | undefined;
      let outage: PostgresOutage | undefined;
      try {
        const start = await prepareDrain(kit, { count: 4_000, rejectEvery: 6, prefix: 'fl' });
        const { expected, db } = start;
        outage = new PostgresOutage(db.name);
        await kit.sandbox.admin.setFaults({ ...TRANSPORT_CALM, latencyMs: 100 });
        const sampler = startCheckpointSampler(kit, start);
        const env = { LEASE_RETRY_MS: String(LEASE_RETRY_MS), LEASE_TTL_MS: String(LEASE_TTL_MS) };
        const workers = [
          await startWorker(kit.setup(db, env)),
          await startWorker(kit.setup(db, env)),
          await startWorker(kit.setup(db, env)),
        ];
        await Promise.all(workers.map((w) => waitUntilLive(w)));
        monitor = new FleetMonitor(workers);
        monitor.start();

        const first = await committingLeader(monitor, workers, [], 30_000);
        // trial 1: kill -9 the leader; another must lead and commit within the bound
        const killedAt = Date.now();
        first.child.signal('SIGKILL');
        await first.child.exited;
        const second = await committingLeader(monitor, workers, [first], KILL_TAKEOVER_BOUND_MS + 5_000);
        const killTakeoverMs = Date.now() - killedAt;

        // trial 2: freeze the new leader past the TTL; the last worker must take over
        const pagesAtFreeze = await pagesOf(second);
        const frozenAt = Date.now();
        second.child.signal('SIGSTOP');
        let third: WorkerProcess;
        try {
          third = await committingLeader(monitor, workers, [first, second], FREEZE_TAKEOVER_BOUND_MS + 5_000);
        } catch (error) {
          const standby = workers.find((w) => w !== first && w !== second);
          throw new Error(
            `no takeover from a frozen leader; backends: ${(await outage.backendStates()).join(' | ')}; workers: ${monitor.describeLatest()}; ` +
              `standby stderr tail: ${standby?.child.stderr().slice(-2_000) ?? ''}`,
            { cause: error },
          );
        }
        const freezeTakeoverMs = Date.now() - frozenAt;
        // let the new leader commit a few pages, then wake the zombie
        const thirdPages = await pagesOf(third);
        await waitFor(async () => (await pagesOf(third)) >= thirdPages + 3, {
          what: 'the new leader to commit 3 more pages',
          timeoutMs: 30_000,
          intervalMs: 100,
          probeErrors: 'retry',
        });
        second.child.signal('SIGCONT');
        try {
          await waitFor(
            async () => {
              const body = (await second.health('/metrics', 1_000)).body;
              return /^intake_sync_leader\{feed="default"\} 0$/m.test(body);
            },
            { what: 'the resumed worker to report standby', timeoutMs: 15_000, intervalMs: 100, probeErrors: 'retry' },
          );
        } catch (error) {
          // name what became of it: exited (and how), or alive and silent, with its last words
          const state = second.child.isRunning() ? 'still running' : `exited ${JSON.stringify(await second.child.exited)}`;
          throw new Error(`the resumed worker did not report standby (${state}); its stderr tail: ${second.child.stderr().slice(-3_000)}`, {
            cause: error,
          });
        }
        const zombiePages = await pagesOf(second);

        await waitFor(
          async () => {
            const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from intake_sync.events`;
            return row?.n === Object.keys(expected.events).length;
          },
          { what: 'all events stored', timeoutMs: 120_000, intervalMs: 250, probeErrors: 'retry' },
        );
        expect(await pagesOf(second), 'the resumed zombie committed pages while standby').toBe(zombiePages);
        await monitor.stop();
        for (const w of workers) if (w.child.isRunning()) await stopWorker(w);
        const report = await sampler.stop();

        const divergence = compareSnapshots(expected, await snapshotStore(db.sql));
        trial.set({
          trials: 2,
          lost: divergence.lost.length,
          duplicated: divergence.duplicated.length,
          note: `takeover after kill -9 ${killTakeoverMs} ms (bound ${KILL_TAKEOVER_BOUND_MS}), after SIGSTOP ${freezeTakeoverMs} ms (bound ${FREEZE_TAKEOVER_BOUND_MS}); zombie pages ${pagesAtFreeze}->${zombiePages}`,
        });
        expect(monitor.violations.join('; '), 'two workers committed interleaved checkpoint versions').toBe('');
        // the zombie's pages counted after SIGCONT (pagesAtFreeze -> zombiePages) are the ones committed
        // between the HTTP read and the signal, and the one whose COMMIT the server had taken when the
        // process stopped: how many depends on the machine's load, not on the lease. What a zombie must
        // never do is commit after the new leader began: every version it committed precedes the new
        // leader's first, and after resuming it commits nothing (the standby count above).
        const zombieLast = Math.max(...monitor.committedBy(second).map((r) => r.to));
        const leaderFirst = Math.min(...monitor.committedBy(third).map((r) => r.from));
        expect(zombieLast, `the zombie committed after the new leader began: ${monitor.describeLatest()}`).toBeLessThan(leaderFirst);
        expect(killTakeoverMs).toBeLessThanOrEqual(KILL_TAKEOVER_BOUND_MS);
        expect(freezeTakeoverMs).toBeLessThanOrEqual(FREEZE_TAKEOVER_BOUND_MS);
        expect(isExact(divergence), describeDivergence(divergence)).toBe(true);
        expectCheckpointSound(report);
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        await monitor?.stop();
        await outage?.close();
        await kit.close();
      }
    });
  });
});

async function pagesOf(worker: WorkerProcess): Promise<number> {
  // a generous timeout: on a loaded machine a scrape can take seconds, and a step of the scenario is no probe to retry
  const body = (await worker.health('/metrics', 10_000)).body;
  const match = /^intake_sync_pages_total\{feed="default"\} (\S+)$/m.exec(body);
  return match ? Number(match[1]) : 0;
}

/** The one worker (not excluded) that reports leader and whose page count grows. */
async function committingLeader(
  monitor: FleetMonitor,
  workers: readonly WorkerProcess[],
  excluded: readonly WorkerProcess[],
  timeoutMs: number,
): Promise<WorkerProcess> {
  const candidates = workers.filter((w) => !excluded.includes(w));
  const since = Date.now();
  const baseline = new Map<string, number>();
  return waitFor(
    () => {
      for (const worker of candidates) {
        const reading = monitor.readingSince(worker, since);
        if (!reading) continue;
        const base = baseline.get(worker.label);
        if (base === undefined) baseline.set(worker.label, reading.pages);
        else if (reading.leader && reading.pages > base) return worker;
      }
      return undefined;
    },
    { what: 'a leader that commits pages', timeoutMs, intervalMs: 50, probeErrors: 'retry' },
  );
}

if (!available) recordSkip(SCENARIO, 'no PostgreSQL at 127.0.0.1:5432');

import { describe, expect, test } from 'vitest';
import { postgresReachable } from '../support/db.js';
import { prepareReferenceDrain, startCheckpointSampler } from '../support/drain-prelude.js';
import { expectCheckpointSound, type SamplerReport } from '../support/faults/checkpoint-sampler.js';
import { compareSnapshots, describeDivergence, isExact } from '../support/faults/compare.js';
import { fetchPage } from '../support/faults/feed-reader.js';
import { malformedEntries, wellFormedEvent } from '../support/faults/hostile-events.js';
import { expectNoLeaks } from '../support/faults/leaks.js';
import { identityOf, type Identity } from '../support/faults/local-prescriptions.js';
import { runSeed, seededRandom } from '../support/faults/rng.js';
import { TRANSPORT_CALM } from '../support/faults/sandbox-admin.js';
import { openScenario, readFeedAndPrescriptions } from '../support/faults/scenario-kit.js';
import { readCheckpoint, snapshotStore } from '../support/faults/store.js';
import { recordSkip, runScenario } from '../support/faults/trials.js';
import { waitFor } from '../support/wait-for.js';
import { runCommand, runOnce, startWorker, stopWorker, waitUntilLive } from '../support/faults/worker.js';

const SCENARIO = '10. a hostile feed the other scenarios do not describe: random faults, restarts and a replay mid-run';
const LIVES = 6;

const available = await postgresReachable();

/**
 * Everything at once, drawn from the seed: content faults baked into the feed (duplicates,
 * malformed entries, unknown names, reordering, an id reused with other content), transport
 * faults, daemon lives ended at random by SIGTERM or kill -9, and a `checkpoint reset
 * --beginning` while a daemon runs (a replay of everything applied so far). The final state
 * must equal a clean run --once of the same feed, row for row.
 */
describe.skipIf(!available)(SCENARIO, () => {
  test('restarts and a replay on a hostile feed end exactly like a clean run', async () => {
    await runScenario(SCENARIO, async (trial) => {
      const seed = runSeed();
      const random = seededRandom(seed);
      const between = (min: number, max: number) => min + random() * (max - min);
      console.info(`[${SCENARIO}] seed ${seed} (replay with FAULTS_SEED=${seed})`);
      const kit = await openScenario('hostile');
      try {
        const content = {
          duplicateRate: between(0.01, 0.08),
          malformedRate: between(0.005, 0.04),
          unknownNameRate: between(0.005, 0.04),
          reorderWindow: Math.floor(between(0, 60)),
          iteratorMode: 'at' as const,
          seed,
        };
        await kit.sandbox.admin.setFaults(content);
        const count = Math.floor(between(900, 1_600));
        const rejectEvery = Math.floor(between(4, 12));
        await kit.sandbox.admin.seed({ count, reject_every: rejectEvery, prefix: 'hx' });
        const first = (await fetchPage(kit.sandbox, undefined, 5)).entries.find((e) => e.id && identityOf(e));
        if (!first) throw new Error('the seeded feed has no well-formed event to copy');
        const base = identityOf(first) as Identity;
        // an id reused with different content, far apart: the first copy stored wins, in both runs
        await kit.sandbox.admin.inject([
          ...malformedEntries(first.raw as Record<string, unknown>, 'hx-bad').map((m) => m.raw),
          wellFormedEvent('hx-reused', 'ordered', base, new Date(Date.UTC(2025, 0, 1, 12, 2)).toISOString()),
        ]);
        await kit.sandbox.admin.seed({ count: 200, reject_every: rejectEvery, prefix: 'hy' });
        await kit.sandbox.admin.inject([
          wellFormedEvent('hx-reused', 'delivered', base, new Date(Date.UTC(2025, 0, 1, 12, 9)).toISOString()),
        ]);
        const prepared = await readFeedAndPrescriptions(kit, 'at', 'hx');

        const start = await prepareReferenceDrain(kit, prepared);
        const { expected, db } = start;
        expect(expected.events['hx-reused']?.name, 'the first copy of a reused id is the one stored').toBe('ordered');

        const transport = {
          ...TRANSPORT_CALM,
          latencyMs: Math.floor(between(40, 100)),
          errorRate: between(0.02, 0.15),
          rateLimitRate: between(0, 0.05),
          retryAfterSeconds: 0,
          dropRate: between(0, 0.05),
          truncatedRate: between(0, 0.05),
          wrongShapeRate: between(0, 0.03),
        };
        await kit.sandbox.admin.setFaults(transport);

        const reports: SamplerReport[] = [];
        let sampler = startCheckpointSampler(kit, start);
        const replayLife = Math.floor(between(1, LIVES - 1));
        const endings: string[] = [];
        let replayedAt = -1;
        for (let life = 0; life < LIVES; life++) {
          const versionAtSpawn = (await readCheckpoint(db.sql, 'default'))?.version ?? 0;
          const worker = await startWorker(kit.setup(db));
          await waitUntilLive(worker);
          await waitFor(async () => ((await readCheckpoint(db.sql, 'default'))?.version ?? 0) > versionAtSpawn, {
            what: 'this life to commit a page',
            timeoutMs: 60_000,
            intervalMs: 20,
            probeErrors: 'retry',
          });
          if (life === replayLife) {
            // a replay while the daemon runs: it must notice the moved checkpoint and start over from the beginning
            reports.push(await sampler.stop());
            const reset = await runCommand(kit.setup(db), ['checkpoint', 'reset', '--beginning']);
            expect(reset.code, `checkpoint reset failed: ${reset.stderr.slice(-800)}`).toBe(0);
            replayedAt = (await readCheckpoint(db.sql, 'default'))?.version ?? -1;
            sampler = startCheckpointSampler(kit, start);
            await waitFor(async () => ((await readCheckpoint(db.sql, 'default'))?.version ?? 0) > replayedAt, {
              what: 'the daemon to apply past the reset',
              timeoutMs: 60_000,
              intervalMs: 20,
              probeErrors: 'retry',
            });
          }
          await new Promise((resolve) => setTimeout(resolve, between(0, 400)));
          if (random() < 0.5) {
            await stopWorker(worker);
            const exit = await worker.child.exited;
            expect(exit.code, `SIGTERM exit of life ${life}: ${worker.child.stderr().slice(-800)}`).toBe(0);
            endings.push('TERM');
          } else {
            worker.child.signal('SIGKILL');
            await worker.child.exited;
            endings.push('KILL');
          }
        }
        const resets = await db.sql<{ n: number }[]>`select count(*)::int as n from intake_sync.checkpoint_resets`;
        expect(resets[0]?.n).toBe(1);

        const final = await runOnce(kit.setup(db), 180_000);
        expect(final.code, `the final run --once failed: ${final.stderr.slice(-1500)}`).toBe(0);
        reports.push(await sampler.stop());

        const divergence = compareSnapshots(expected, await snapshotStore(db.sql));
        trial.set({
          trials: LIVES + 1,
          lost: divergence.lost.length,
          duplicated: divergence.duplicated.length,
          note: `${prepared.feed.length} entries; lives ended ${endings.join(',')}; replay in life ${replayLife + 1}; seed ${seed}`,
        });
        expect(isExact(divergence), describeDivergence(divergence)).toBe(true);
        for (const report of reports) expectCheckpointSound(report);
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        await kit.close();
      }
    });
  });
});

if (!available) recordSkip(SCENARIO, 'no PostgreSQL at 127.0.0.1:5432');

import { describe, expect, test } from 'vitest';
import { postgresReachable } from '../support/db.js';
import { expectCheckpointSound } from '../support/faults/checkpoint-sampler.js';
import { compareSnapshots, describeDivergence, isExact } from '../support/faults/compare.js';
import { FeedPositions } from '../support/faults/feed-positions.js';
import { expectNoLeaks } from '../support/faults/leaks.js';
import { runSeed, seededRandom } from '../support/faults/rng.js';
import { TRANSPORT_CALM } from '../support/faults/sandbox-admin.js';
import { openScenario } from '../support/faults/scenario-kit.js';
import { prepareDrain, startCheckpointSampler } from '../support/drain-prelude.js';
import { readCheckpoint, snapshotStore } from '../support/faults/store.js';
import { recordSkip, runScenario } from '../support/faults/trials.js';
import { waitFor } from '../support/wait-for.js';
import { runOnce, startWorker } from '../support/faults/worker.js';

const SCENARIO = '1. kill -9 at random instants during a 50k-event drain (transport faults on)';
// 13,600 prescriptions, every 10th rejected: 12,240 x 4 + 1,360 x 1 = 50,320 events
const PRESCRIPTIONS = 13_600;
const REJECT_EVERY = 10;
const KILLS = 25;
// Every STARTUP_KILL_EVERY-th kill lands at a random instant after spawn (start-up:
// migrations, lease); the others wait until that life has committed a page and then
// strike at a random instant within the next KILL_AFTER_COMMIT_MS (fetch, apply, commit).
const STARTUP_KILL_EVERY = 5;
// a compiled worker starts in ~0.5 s: kills in this window land during start-up or the first pages
const STARTUP_KILL_MS = { min: 100, max: 800 };
// with the upstream latency below, short enough that 25 lives cannot drain the whole feed
const KILL_AFTER_COMMIT_MS = 250;
// per GET /events: caps the drain near 6k events/s, so the kills land mid-drain whatever the worker's speed
const UPSTREAM_LATENCY_MS = 40;

const available = await postgresReachable();

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe.skipIf(!available)(SCENARIO, () => {
  test('the final state equals the feed oracle after every kill', async () => {
    await runScenario(SCENARIO, async (trial) => {
      const seed = runSeed();
      const random = seededRandom(seed);
      console.info(`[${SCENARIO}] seed ${seed} (replay with FAULTS_SEED=${seed})`);
      const kit = await openScenario('kill9');
      try {
        const start = await prepareDrain(kit, { count: PRESCRIPTIONS, rejectEvery: REJECT_EVERY, prefix: 'k9' });
        const { seeded, prepared, expected, db } = start;
        expect(prepared.feed.length).toBeGreaterThanOrEqual(50_000);
        expect(seeded).toMatchObject({ prescriptions: PRESCRIPTIONS, events: prepared.feed.length });

        // the oracle: computed from the feed itself, cross-checked against the sandbox's schedule
        const statuses = Object.values(expected.prescriptions).map((p) => p.status);
        expect(statuses.filter((s) => s === 'rejected')).toHaveLength(PRESCRIPTIONS / REJECT_EVERY);
        expect(statuses.filter((s) => s === 'delivered')).toHaveLength(PRESCRIPTIONS - PRESCRIPTIONS / REJECT_EVERY);

        await kit.sandbox.admin.setFaults({
          ...TRANSPORT_CALM,
          latencyMs: UPSTREAM_LATENCY_MS,
          errorRate: 0.05,
          rateLimitRate: 0.02,
          retryAfterSeconds: 0,
          dropRate: 0.02,
          truncatedRate: 0.02,
          wrongShapeRate: 0.01,
          seed,
        });
        const sampler = startCheckpointSampler(kit, start);

        let kills = 0;
        let midDrainKills = 0;
        const setup = kit.setup(db);
        while (kills < KILLS) {
          const versionAtSpawn = (await readCheckpoint(db.sql, 'default'))?.version ?? 0;
          const worker = await startWorker(setup, ['--once']);
          const exited = worker.child.exited.then(() => 'exited' as const);
          if (kills % STARTUP_KILL_EVERY === 0) {
            await Promise.race([exited, pause(STARTUP_KILL_MS.min + random() * (STARTUP_KILL_MS.max - STARTUP_KILL_MS.min))]);
          } else {
            await Promise.race([
              exited,
              waitFor(async () => ((await readCheckpoint(db.sql, 'default'))?.version ?? 0) > versionAtSpawn, {
                what: 'this life to commit a page',
                timeoutMs: 60_000,
                intervalMs: 20,
                probeErrors: 'retry',
              }),
            ]);
            midDrainKills++;
            await Promise.race([exited, pause(random() * KILL_AFTER_COMMIT_MS)]);
          }
          if (!worker.child.isRunning()) {
            const exit = await worker.child.exited;
            throw new Error(
              `worker exited on its own (code ${exit.code}) after ${kills} kills: lengthen the feed or shorten the kill delays; stderr tail: ${worker.child.stderr().slice(-800)}`,
            );
          }
          worker.child.signal('SIGKILL');
          await worker.child.exited;
          kills++;
        }
        const checkpoint = await readCheckpoint(db.sql, 'default');
        const positionAtLastKill = checkpoint?.iterator
          ? await new FeedPositions(kit.sandbox, prepared.feed).positionOf(checkpoint.iterator)
          : 0;
        trial.set({
          trials: kills,
          note: `${midDrainKills} kills after a commit; position after the last kill ${positionAtLastKill}/${prepared.feed.length}; seed ${seed}`,
        });
        expect(positionAtLastKill, 'kills must land mid-drain').toBeGreaterThan(0);
        expect(positionAtLastKill).toBeLessThan(prepared.feed.length);

        const final = await runOnce(setup, 180_000);
        expect(final.code, `the final run --once failed: ${final.stderr.slice(-1500)}`).toBe(0);
        const report = await sampler.stop();

        const divergence = compareSnapshots(expected, await snapshotStore(db.sql));
        trial.set({ lost: divergence.lost.length, duplicated: divergence.duplicated.length });
        expectCheckpointSound(report);
        expect(report.samples).toBeGreaterThan(10);
        expect(isExact(divergence), describeDivergence(divergence)).toBe(true);
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        await kit.close();
      }
    });
  });
});

if (!available) recordSkip(SCENARIO, 'no PostgreSQL at 127.0.0.1:5432');

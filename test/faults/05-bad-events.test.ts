import { describe, expect, test } from 'vitest';
import { postgresReachable } from '../support/db.js';
import { prepareReferenceDrain, startCheckpointSampler } from '../support/drain-prelude.js';
import { expectCheckpointSound } from '../support/faults/checkpoint-sampler.js';
import { compareSnapshots, describeDivergence, isExact } from '../support/faults/compare.js';
import { fetchPage } from '../support/faults/feed-reader.js';
import { malformedEntries, wellFormedEvent } from '../support/faults/hostile-events.js';
import { expectNoLeaks } from '../support/faults/leaks.js';
import { identityOf, identityText, type Identity, type LocalPrescription } from '../support/faults/local-prescriptions.js';
import { runSeed, seededRandom } from '../support/faults/rng.js';
import { TRANSPORT_CALM } from '../support/faults/sandbox-admin.js';
import { openScenario, readFeedAndPrescriptions, type ScenarioDatabase } from '../support/faults/scenario-kit.js';
import { snapshotStore } from '../support/faults/store.js';
import { recordSkip, runScenario } from '../support/faults/trials.js';
import { runOnce, startWorker } from '../support/faults/worker.js';

const SCENARIO = '5. bad events: malformed, unknown names, 1 MB payload, same page twice, out of order, duplicates';
const KILLS = 3;

const available = await postgresReachable();

/** An identity of our own, derived from a real one so every field stays valid. */
const twin = (base: Identity, n: number): Identity => ({
  ...base,
  patient_first_name: `Injpat${'abcdefghij'[n % 10]}${'klmnopqrst'[Math.floor(n / 10) % 10]}`,
  patient_last_name: `Hostile${n}`,
});
const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 12, minute)).toISOString();

describe.skipIf(!available)(SCENARIO, () => {
  test('quarantined or applied per the rules, never stuck; a faulty run with kills equals the clean run', async () => {
    await runScenario(SCENARIO, async (trial) => {
      const seed = runSeed();
      const random = seededRandom(seed);
      const kit = await openScenario('badevents');
      try {
        // content faults are baked into the feed at publish time: both runs read the same entries
        await kit.sandbox.admin.setFaults({
          duplicateRate: 0.05,
          malformedRate: 0.03,
          unknownNameRate: 0.03,
          reorderWindow: 20,
          iteratorMode: 'at',
          seed,
        });
        await kit.sandbox.admin.seed({ count: 600, reject_every: 9, prefix: 'bd' });
        const first = (await fetchPage(kit.sandbox, undefined, 5)).entries.find((e) => e.id && identityOf(e));
        if (!first) throw new Error('the seeded feed has no well-formed event to copy');
        const base = identityOf(first) as Identity;
        const template = first.raw as Record<string, unknown>;
        const [pair, reversed, late, unknownName, big, unmatched, ambiguous, dup] = [0, 1, 2, 3, 4, 5, 6, 7].map((n) =>
          twin(base, n),
        ) as Identity[];
        const fillers = Array.from({ length: 260 }, (_, n) => twin(base, 100 + n));
        const malformed = malformedEntries(template, 'bad');

        // order matters: pairs inside one page, `late` split by more than a page of fillers
        await kit.sandbox.admin.inject([
          ...malformed.map((m) => m.raw),
          wellFormedEvent('inj-pair-1', 'accepted', pair!, at(1)),
          wellFormedEvent('inj-pair-2', 'delivered', pair!, at(4)),
          wellFormedEvent('inj-rev-1', 'delivered', reversed!, at(4)),
          wellFormedEvent('inj-rev-2', 'accepted', reversed!, at(1)),
          wellFormedEvent('inj-late-3', 'dispensed', late!, at(3)),
          wellFormedEvent('inj-unknown-1', 'accepted', unknownName!, at(1)),
          wellFormedEvent('inj-unknown-2', 'refill_requested', unknownName!, at(2)),
          wellFormedEvent('inj-unmatched', 'accepted', unmatched!, at(1)),
          wellFormedEvent('inj-ambiguous', 'accepted', ambiguous!, at(1)),
          wellFormedEvent('inj-dup', 'ordered', dup!, at(2)),
          ...fillers.map((f, n) => wellFormedEvent(`inj-fill-${n}`, 'accepted', f, at(1))),
          wellFormedEvent('inj-late-2', 'ordered', late!, at(2)),
          wellFormedEvent('inj-late-1', 'accepted', late!, at(1)),
          wellFormedEvent('inj-dup', 'ordered', dup!, at(2)),
        ]);
        // alone: the admin endpoint takes bodies up to 1 MiB
        await kit.sandbox.admin.inject([wellFormedEvent('inj-big', 'ordered', big!, at(2), { blob: 'x'.repeat(1_000_000) })]);

        const prepared = await readFeedAndPrescriptions(kit, 'at', 'bd', (derived) => {
          const kept = derived.filter((p) => identityText(p.prescription_identity) !== identityText(unmatched!));
          const ambiguousTwin = kept.find((p) => identityText(p.prescription_identity) === identityText(ambiguous!));
          return ambiguousTwin
            ? [
                ...kept,
                {
                  external_id: 'bd-ambiguous-twin',
                  prescription_identity: ambiguousTwin.prescription_identity,
                } satisfies LocalPrescription,
              ]
            : kept;
        });
        const externalOf = (identity: Identity) =>
          prepared.prescriptions.find((p) => identityText(p.prescription_identity) === identityText(identity))?.external_id;

        // the reference: a clean drain of this very feed into its own database; 'main' gets the same prescriptions
        const start = await prepareReferenceDrain(kit, prepared);
        const { expected, reference, db } = start;

        // the rules, checked on the clean run
        const statusOf = (identity: Identity) => expected.prescriptions[externalOf(identity) ?? '']?.status;
        expect(statusOf(pair!)).toBe('delivered');
        expect(statusOf(reversed!)).toBe('delivered');
        expect(statusOf(late!)).toBe('dispensed');
        expect(statusOf(unknownName!)).toBe('accepted');
        expect(expected.events['inj-unknown-2']).toEqual({ name: 'refill_requested', externalId: externalOf(unknownName!) });
        expect(expected.events['inj-big']).toEqual({ name: 'ordered', externalId: externalOf(big!) });
        expect(expected.events['inj-dup']).toEqual({ name: 'ordered', externalId: externalOf(dup!) });
        expect(
          Object.values(expected.quarantine)
            .filter((q) => q.eventId === 'inj-unmatched')
            .map((q) => q.reason),
        ).toEqual(['unmatched']);
        expect(
          Object.values(expected.quarantine)
            .filter((q) => q.eventId === 'inj-ambiguous')
            .map((q) => q.reason),
        ).toEqual(['ambiguous']);
        await expectMalformedKept(reference, malformed.length);

        // the hostile run: transport faults on, kill -9 a few times, then drain to done
        const sampler = startCheckpointSampler(kit, start);
        await kit.sandbox.admin.setFaults({
          ...TRANSPORT_CALM,
          errorRate: 0.1,
          truncatedRate: 0.05,
          wrongShapeRate: 0.03,
          dropRate: 0.03,
          retryAfterSeconds: 0,
        });
        for (let kill = 0; kill < KILLS; kill++) {
          const worker = await startWorker(kit.setup(db), ['--once']);
          await new Promise((resolve) => setTimeout(resolve, 1_000 + random() * 1_500));
          worker.child.signal('SIGKILL');
          await worker.child.exited;
        }
        const hostile = await runOnce(kit.setup(db), 120_000);
        expect(hostile.code, `the hostile run did not reach done: ${hostile.stderr.slice(-1500)}`).toBe(0);
        const report = await sampler.stop();

        const divergence = compareSnapshots(expected, await snapshotStore(db.sql));
        const contentFaults = prepared.feed.length - Object.keys(expected.events).length;
        trial.set({
          trials: malformed.length + 12 + contentFaults,
          lost: divergence.lost.length,
          duplicated: divergence.duplicated.length,
          note: `${prepared.feed.length} entries incl. ${malformed.length} injected malformed; ${KILLS} kills; seed ${seed}`,
        });
        expect(isExact(divergence), describeDivergence(divergence)).toBe(true);
        expectCheckpointSound(report);
        expectNoLeaks(kit.capture, kit.needles());
      } finally {
        await kit.close();
      }
    });
  });
});

/** Every injected malformed entry is in quarantine as malformed, with its raw body and a reason. */
async function expectMalformedKept(db: ScenarioDatabase, injected: number): Promise<void> {
  const rows = await db.sql<{ n: number; with_detail: number }[]>`
    select count(*)::int as n, count(*) filter (where raw is not null and length(detail) > 0)::int as with_detail
      from intake_sync.quarantine where reason = 'malformed'`;
  expect(rows[0]?.n ?? 0).toBeGreaterThanOrEqual(injected);
  expect(rows[0]?.with_detail).toBe(rows[0]?.n);
  const keyed = await db.sql<
    { n: number }[]
  >`select count(*)::int as n from intake_sync.quarantine where reason = 'malformed' and raw::text like '%bad-noid%'`;
  expect(keyed[0]?.n, 'the event without an id is kept under a key of its own').toBe(1);
}

if (!available) recordSkip(SCENARIO, 'no PostgreSQL at 127.0.0.1:5432');

import { CheckpointSampler } from './faults/checkpoint-sampler.js';
import { FeedPositions } from './faults/feed-positions.js';
import { expectedFromFeed } from './faults/oracle.js';
import { snapshotStore, type StoreSnapshot } from './faults/store.js';
import { runOnce } from './faults/worker.js';
import { expect } from 'vitest';
import {
  importPrescriptions,
  readFeedAndPrescriptions,
  type PreparedFeed,
  type ScenarioDatabase,
  type ScenarioKit,
} from './faults/scenario-kit.js';

/** What a drain scenario starts from: the seeded feed, its oracle, and a database with the matching prescriptions. */
export interface DrainStart {
  /** the sandbox's answer to the seed (counts of prescriptions and events) */
  seeded: unknown;
  prepared: PreparedFeed;
  /** the store the feed must end in: computed from the feed itself, or a clean run's (see prepareReferenceDrain) */
  expected: StoreSnapshot;
  /** the worker's database ('main'), its prescriptions imported */
  db: ScenarioDatabase;
}

/**
 * The prelude of a drain scenario: seed `count` prescriptions (every `rejectEvery`-th rejected) under
 * `prefix`, read the feed back after its first event, compute the oracle, and import the matching
 * prescriptions into a fresh 'main' database. Faults are the scenario's own: none is set here.
 */
export async function prepareDrain(kit: ScenarioKit, seed: { count: number; rejectEvery: number; prefix: string }): Promise<DrainStart> {
  const seeded = await kit.sandbox.admin.seed({ count: seed.count, reject_every: seed.rejectEvery, prefix: seed.prefix });
  const prepared = await readFeedAndPrescriptions(kit, 'after', seed.prefix);
  const expected = expectedFromFeed(prepared.feed, prepared.prescriptions);
  const db = await kit.database('main');
  await importPrescriptions(kit, db, prepared);
  return { seeded, prepared, expected, db };
}

/** A drain whose oracle is a clean run of the same feed, kept in its own 'reference' database. */
export interface ReferenceDrainStart extends Omit<DrainStart, 'seeded'> {
  reference: ScenarioDatabase;
}

/**
 * The prelude of a drain scenario whose feed the scenario seeded and doctored itself (content faults,
 * injected events) so no oracle can be computed from it: import `prepared` into a 'reference' database
 * and drain it once with no transport faults set yet; its store is the expected one. Then import the
 * same prescriptions into a fresh 'main' database for the faulty run.
 */
export async function prepareReferenceDrain(kit: ScenarioKit, prepared: PreparedFeed): Promise<ReferenceDrainStart> {
  const reference = await kit.database('reference');
  await importPrescriptions(kit, reference, prepared);
  const clean = await runOnce(kit.setup(reference), 120_000);
  expect(clean.code, `the clean run failed: ${clean.stderr.slice(-1500)}`).toBe(0);
  const expected = await snapshotStore(reference.sql);
  const db = await kit.database('main');
  await importPrescriptions(kit, db, prepared);
  // a malformed finding's key is keyed with its database's own secret: the oracle's keys are the
  // faulty run's only when both databases share it (the migrations made each one its own)
  const [shared] = await reference.sql<{ secret: Uint8Array }[]>`select secret from intake_sync.finding_key_secret`;
  await db.sql`update intake_sync.finding_key_secret set secret = ${shared!.secret}`;
  return { prepared, expected, reference, db };
}

/** Starts sampling the feed's checkpoint in `db` against the feed and the oracle's events (stop it at the end). */
export function startCheckpointSampler(kit: ScenarioKit, { db, prepared, expected }: Omit<DrainStart, 'seeded'>): CheckpointSampler {
  const sampler = new CheckpointSampler(
    db.sql,
    'default',
    prepared.feed,
    new FeedPositions(kit.sandbox, prepared.feed),
    new Set(Object.keys(expected.events)),
  );
  sampler.start();
  return sampler;
}

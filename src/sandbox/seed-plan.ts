import type { KnownEventName, PrescriptionIdentity } from '../intake/index.js';
import { sampleIdentity, seedRejects } from './fixtures.js';
import { HAPPY_PATH, REJECTION_PATH, stepDueAt } from './rules.js';
import { SeedConflictError } from './seed-conflict-error.js';
import type { PrescriptionSource } from './tenant.js';

export interface SeedOptions {
  key?: string;
  count: number;
  rejectEvery?: number;
  prefix?: string;
}

/** One fixture prescription a bulk seed adds. */
export interface SeededPrescription {
  externalId: string;
  identity: PrescriptionIdentity;
  path: readonly KnownEventName[];
  source: PrescriptionSource;
  receivedAt: number;
}

/**
 * Pure: the prescriptions a bulk seed adds at `now`, received a second apart and early enough that
 * every step of each is already due (the whole history is published at once). Refuses, adding
 * nothing, when one of the ids is taken (`taken`).
 */
export function seedPlan(options: SeedOptions, now: number, taken: (externalId: string) => boolean): SeededPrescription[] {
  const prefix = options.prefix ?? 'seed';
  const count = Math.max(0, Math.floor(options.count));
  for (let i = 0; i < count; i++) {
    if (taken(`${prefix}-${i}`)) throw new SeedConflictError(`${prefix}-${i}`);
  }
  const firstReceivedAt = now - stepDueAt(0, HAPPY_PATH.length - 1) - count * 1000;
  return Array.from({ length: count }, (_, i) => {
    const rejected = seedRejects(i, options.rejectEvery);
    return {
      externalId: `${prefix}-${i}`,
      identity: sampleIdentity(i),
      path: rejected ? REJECTION_PATH : HAPPY_PATH,
      source: { kind: 'fixture', index: i, prefix, rejected },
      receivedAt: firstReceivedAt + i * 1000,
    };
  });
}

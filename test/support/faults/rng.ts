import { createPrng } from '../../../src/sandbox/prng.js';

/** A seeded PRNG (the sandbox's mulberry32): the kill instants of a run can be replayed from its seed. */
export const seededRandom = createPrng;

/** Seed from FAULTS_SEED when given (to replay a failure), otherwise from the clock; always logged by callers. */
export function runSeed(): number {
  const fromEnv = Number(process.env.FAULTS_SEED);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : Date.now() % 2_147_483_647;
}

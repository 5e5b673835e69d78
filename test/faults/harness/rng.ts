/** A seeded PRNG (mulberry32): the kill instants of a run can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Seed from FAULTS_SEED when given (to replay a failure), otherwise from the clock; always logged by callers. */
export function runSeed(): number {
  const fromEnv = Number(process.env.FAULTS_SEED);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : Date.now() % 2_147_483_647;
}

/** A seeded pseudo-random source in [0, 1): fault injection must be reproducible run to run. */
export type Random = () => number;

/** mulberry32: tiny, fast and good enough for picking faults; not for anything secret. */
export function createPrng(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [0, bound) drawn from `random`. */
export function randomIndex(random: Random, bound: number): number {
  return Math.floor(random() * bound);
}

/** Fisher-Yates shuffle in place, driven by `random` so the order is reproducible. */
export function shuffleInPlace<T>(items: T[], random: Random): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomIndex(random, i + 1);
    const swap = items[i] as T;
    items[i] = items[j] as T;
    items[j] = swap;
  }
  return items;
}

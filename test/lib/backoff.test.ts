import { describe, expect, it } from 'vitest';
import { fullJitterDelay } from '../../src/lib/backoff.js';

const policy = { baseMs: 100, capMs: 1_000 };
const fixed = (value: number) => () => value;

describe('fullJitterDelay', () => {
  it.each([
    // attempt, random, expected: random * min(cap, base * 2^attempt)
    [0, 0, 0],
    [0, 0.5, 50],
    [0, 0.999, 99],
    [1, 0.5, 100],
    [2, 0.5, 200],
    [3, 0.999, 799],
    [4, 0.5, 500], // 1600 capped to 1000
    [40, 0.999, 999], // huge exponent stays capped
    [-1, 0.5, 50], // a negative attempt counts as the first
    [0, 1.5, 100], // an out-of-range random is clamped
    [0, -0.2, 0],
    [0, Number.NaN, 0],
  ])('attempt %i with random %d waits %i ms', (attempt, random, expected) => {
    expect(fullJitterDelay(attempt, policy, fixed(random))).toBe(expected);
  });

  it('stays within [0, window) across the random range', () => {
    for (let attempt = 0; attempt < 8; attempt++) {
      const window = Math.min(policy.capMs, policy.baseMs * 2 ** attempt);
      for (const r of [0, 0.25, 0.5, 0.75, 0.9999]) {
        const delay = fullJitterDelay(attempt, policy, fixed(r));
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(window);
      }
    }
  });
});

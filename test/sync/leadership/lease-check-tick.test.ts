import { describe, expect, it } from 'vitest';
import { untilLeaseCheck } from '../../../src/sync/leadership/lease-check-tick.js';

describe('untilLeaseCheck', () => {
  it.each([
    // now, every, phase, wait
    [0, 2_000, 0, 2_000],
    [1, 2_000, 0, 1_999],
    [1_999, 2_000, 0, 1],
    [2_000, 2_000, 0, 2_000],
    [10_500, 2_000, 700, 200],
    [10_700, 2_000, 700, 2_000],
    // a phase past now (a clock near its epoch) counts back as well as forward
    [100, 2_000, 1_500, 1_400],
  ])('at %i, every %i from %i: waits %i', (now, every, phase, wait) => {
    expect(untilLeaseCheck(now, every, phase)).toBe(wait);
  });

  it('callers that finish anywhere within one tick wake together at the next', () => {
    const wakes = [12_001, 12_950, 13_999].map((now) => now + untilLeaseCheck(now, 2_000, 0));
    expect(new Set(wakes)).toEqual(new Set([14_000]));
  });

  it('refuses an interval that is not positive', () => {
    expect(() => untilLeaseCheck(0, 0, 0)).toThrow('positive');
  });
});

import { describe, expect, it } from 'vitest';
import { describeTimeScale } from '../../src/sandbox/clock.js';

describe('describeTimeScale', () => {
  it.each([
    [1, 'simulator time runs at the wall clock'],
    [300, 'a 5-minute lifecycle step takes 1 s'],
    [60, 'a 5-minute lifecycle step takes 5 s'],
    [3000, 'a 5-minute lifecycle step takes 100 ms'],
    [300, 'an hour of running puts them 299 hours ahead'],
  ])('scale %d: %s', (scale, text) => {
    expect(describeTimeScale(scale)).toContain(text);
  });
});

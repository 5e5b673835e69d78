import { describe, expect, test } from 'vitest';
import { percentile, round, summarize } from '../../bench/stats.js';

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
  test.each([
    [[5], 50, 5],
    [[5], 99, 5],
    [[1, 2], 50, 1],
    [[1, 2], 99, 2],
    [[1, 2, 3, 4], 50, 2],
    [hundred, 50, 50],
    [hundred, 99, 99],
    [hundred, 100, 100],
    [hundred, 0, 1],
  ])('%j p%d = %d', (sorted, p, expected) => {
    expect(percentile(sorted, p)).toBe(expected);
  });

  test('an empty sample has no percentile', () => {
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('summarize', () => {
  test('sorts before taking percentiles', () => {
    expect(summarize([30, 10, 20, 40])).toEqual({ count: 4, mean: 25, p50: 20, p99: 40, max: 40 });
  });

  test('an empty sample is all NaN but counts zero', () => {
    const s = summarize([]);
    expect(s.count).toBe(0);
    expect(s.mean).toBeNaN();
    expect(s.max).toBeNaN();
  });
});

test.each([
  [1.25, 1, 1.3],
  [1.24, 1, 1.2],
  [1234.5678, 2, 1234.57],
  [7, 0, 7],
])('round(%d, %d) = %d', (value, digits, expected) => {
  expect(round(value, digits)).toBe(expected);
});

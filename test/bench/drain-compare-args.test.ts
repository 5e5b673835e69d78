import { describe, expect, test } from 'vitest';
import { BenchUsageError } from '../../bench/bench-usage-error.js';
import { parseDrainCompareArgs } from '../../bench/drain-compare-args.js';

describe('parseDrainCompareArgs', () => {
  test('defaults: 100k events, 3 pairs, this checkout as the candidate', () => {
    expect(parseDrainCompareArgs(['--baseline', '/work/wt-before'])).toEqual({
      baseline: '/work/wt-before',
      events: 100_000,
      pairs: 3,
      resultsDir: 'bench/results',
    });
  });

  test('every flag', () => {
    expect(
      parseDrainCompareArgs(['--baseline', 'a', '--candidate', 'b', '--events=50000', '--pairs', '5', '--results-dir', '/tmp/x']),
    ).toEqual({ baseline: 'a', candidate: 'b', events: 50_000, pairs: 5, resultsDir: '/tmp/x' });
  });

  test.each([
    [[], /--baseline: is required/],
    [['--baseline', 'a', '--pairs', '0'], /--pairs: must be >= 1/],
    [['--baseline', 'a', '--events', 'many'], /--events: must be a number/],
    [['--baseline', 'a', '--drains', '3'], /Unknown option '--drains'/],
  ])('%j is refused naming the flag', (argv, message) => {
    expect(() => parseDrainCompareArgs(argv)).toThrow(BenchUsageError);
    expect(() => parseDrainCompareArgs(argv)).toThrow(message);
  });
});

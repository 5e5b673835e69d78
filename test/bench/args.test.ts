import { describe, expect, test } from 'vitest';
import { parseBenchArgs } from '../../bench/args.js';

describe('parseBenchArgs', () => {
  test('defaults: 1M events, 10 s ceiling and naive, 1 s poll interval', () => {
    expect(parseBenchArgs([])).toEqual({
      events: 1_000_000,
      ceilingSeconds: 10,
      naiveSeconds: 10,
      latencyRounds: 30,
      pollIntervalMs: 1_000,
      matchLarge: 1_000_000,
      resultsDir: 'bench/results',
      keep: false,
    });
  });

  test.each([
    [['--events', '200000'], { events: 200_000 }],
    [['--events=2000', '--keep'], { events: 2_000, keep: true }],
    [['--match-large', '50000'], { matchLarge: 50_000 }],
    [['--ceiling-seconds', '1.5', '--naive-seconds', '0.5'], { ceilingSeconds: 1.5, naiveSeconds: 0.5 }],
    [['--latency-rounds', '3', '--poll-interval-ms', '200'], { latencyRounds: 3, pollIntervalMs: 200 }],
    [['--results-dir', '/tmp/out'], { resultsDir: '/tmp/out' }],
  ])('%j', (argv, expected) => {
    expect(parseBenchArgs(argv)).toMatchObject(expected);
  });

  test.each([
    [['--events', 'lots'], /--events: must be a number/],
    [['--events', '0'], /--events: must be >= 1/],
    [['--events', '1.5'], /--events: must be a whole number/],
    [['--ceiling-seconds', '0'], /--ceiling-seconds: must be > 0/],
    [['--poll-interval-ms', '5'], /--poll-interval-ms: must be >= 10/],
    [['--evnts', '5'], /Unknown option '--evnts'/],
    [['--keep=yes'], /--keep/],
  ])('%j is refused naming the flag', (argv, message) => {
    expect(() => parseBenchArgs(argv)).toThrow(message);
    expect(() => parseBenchArgs(argv)).toThrow(expect.objectContaining({ name: 'BenchUsageError' }));
  });
});

import { describe, expect, test } from 'vitest';
import { parseBenchArgs } from '../../bench/args.js';

describe('parseBenchArgs', () => {
  test('defaults: 1M events drained 3 times, 10 s ceiling and naive, 1 s poll interval, WAN at 50 and 150 ms, 120 idle polls, 20 feeds', () => {
    expect(parseBenchArgs([])).toEqual({
      events: 1_000_000,
      drains: 3,
      wanRttMs: [50, 150],
      wanSeconds: 15,
      idlePolls: 120,
      idlePollIntervalMs: 1_000,
      feeds: 20,
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
    [['--feeds', '4'], { feeds: 4 }],
    [['--drains', '1', '--wan-rtt-ms', '20', '--wan-seconds', '2'], { drains: 1, wanRttMs: [20], wanSeconds: 2 }],
    [
      ['--wan-rtt-ms', '0,50,150', '--idle-polls', '3', '--idle-poll-interval-ms', '200'],
      { wanRttMs: [0, 50, 150], idlePolls: 3, idlePollIntervalMs: 200 },
    ],
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
    [['--wan-rtt-ms', '50;150'], /--wan-rtt-ms: must be a comma-separated list/],
    [['--drains', '0'], /--drains: must be >= 1/],
    [['--feeds', '1'], /--feeds: must be >= 2/],
    [['--keep=yes'], /--keep/],
  ])('%j is refused naming the flag', (argv, message) => {
    expect(() => parseBenchArgs(argv)).toThrow(message);
    expect(() => parseBenchArgs(argv)).toThrow(expect.objectContaining({ name: 'BenchUsageError' }));
  });
});

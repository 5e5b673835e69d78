import { describe, expect, test } from 'vitest';
import { parseFleetArgs } from '../../bench/fleet-args.js';
import { backlogFigures, backloggedFeeds } from '../../bench/fleet-backlog.js';
import { requestRate, requestStartObserver } from '../../bench/fleet-request-rate.js';
import { fairShare, isFullShare, LeaderlessTracker } from '../../bench/fleet-share.js';

describe('requestRate', () => {
  test('the worst sliding second finds a burst that straddles two whole seconds', () => {
    // 5 requests in [900, 1_300): the fixed seconds hold 3 each, a sliding window holds all 5
    const times = [100, 900, 950, 1_000, 1_100, 1_200, 2_500];
    const rate = requestRate(times, 0, 3_000);
    expect(rate).toMatchObject({ requests: 7, seconds: 3, worst_sliding_1s: 5, worst_fixed_1s: 3 });
    expect(rate.mean_per_s).toBeCloseTo(7 / 3);
  });

  test('only the window counts; a window of exactly 1000 ms apart holds one of the two ends', () => {
    expect(requestRate([0, 1_000, 5_000], 0, 2_000)).toMatchObject({ requests: 2, worst_sliding_1s: 1 });
  });
});

describe('requestStartObserver', () => {
  test('counts a chunk starting with a request line, not a body chunk', () => {
    const times: number[] = [];
    const observe = requestStartObserver(times)();
    observe(Buffer.from('GET /intake_api/2024-12-10/events?limit=1 HTTP/1.1\r\n'));
    observe(Buffer.from('POST /intake_api/2024-12-10/prescriptions HTTP/1.1\r\ncontent-length: 9\r\n\r\n'));
    observe(Buffer.from('{"a":"GET /"}'));
    expect(times).toHaveLength(2);
  });
});

describe('fair share', () => {
  test.each([
    [[500], 500, true],
    [[250, 250], 500, true],
    [[125, 125, 125, 125], 500, true],
    [[126, 125, 125, 124], 500, true],
    [[167, 167, 166], 500, true],
    [[130, 120, 125, 125], 500, false],
    [[125, 125, 125, 124], 500, false],
    [[], 500, false],
  ])('%j of %i feeds: %s', (led, feeds, expected) => {
    expect(isFullShare(led, feeds)).toBe(expected);
  });

  test('ceil(feeds / replicas)', () => {
    expect([1, 2, 3, 4].map((n) => fairShare(500, n))).toEqual([500, 250, 167, 125]);
  });
});

describe('LeaderlessTracker', () => {
  test('the longest stretch without a leader, one still open included', () => {
    const tracker = new LeaderlessTracker();
    tracker.sample(0, ['a', 'b']);
    tracker.sample(1_000, ['b']);
    tracker.sample(2_500, ['c']);
    expect(tracker.longestMs(2_500)).toBe(2_500);
    expect(tracker.longestMs(6_000)).toBe(3_500);
  });
});

describe('backloggedFeeds', () => {
  test('spread evenly over the list', () => {
    const feeds = Array.from({ length: 500 }, (_, i) => i);
    const picked = backloggedFeeds(feeds, 50);
    expect(picked).toHaveLength(50);
    expect(picked.slice(0, 3)).toEqual([0, 10, 20]);
    expect(backloggedFeeds([1, 2], 5)).toEqual([1, 2]);
  });
});

describe('backlogFigures', () => {
  test('throughput over the drain (first page anywhere to the last catch-up), the start and the spread apart', () => {
    // seeding 0..1000 ms; feed a seeded at 500 and first applied at 2500, feed b seeded at 1000, first applied at 1500
    const figures = backlogFigures(
      [
        { seededAt: 500, firstPageAt: 2_500, caughtUpAt: 11_500 },
        { seededAt: 1_000, firstPageAt: 1_500, caughtUpAt: 21_500 },
      ],
      40_000,
      0,
      1_000,
    );
    expect(figures).toMatchObject({ seeding_s: 1, seconds: 20.5, drain_seconds: 20, drain_events_per_s: 2_000, events_per_s: 1_951 });
    expect(figures.first_page_s).toMatchObject({ min: 0.5, max: 2 });
    expect(figures.feed_drain_s).toMatchObject({ min: 9, max: 20 });
    expect(figures.caught_up_after_first_page_s).toMatchObject({ min: 10, max: 20 });
  });
});

describe('parseFleetArgs', () => {
  test('--backlog-only needs a backlog', () => {
    expect(parseFleetArgs(['--backlog-only']).backlogOnly).toBe(true);
    expect(parseFleetArgs([]).backlogOnly).toBe(false);
    expect(() => parseFleetArgs(['--backlog-only', '--backlogged', '0'])).toThrow('--backlog-only: needs --backlogged above 0');
  });

  test('the issue sizes by default', () => {
    expect(parseFleetArgs([])).toMatchObject({ feeds: 500, replicas: [1, 2, 4], backlogged: 50, leaseRetryMs: 2_000, leaseTtlMs: 15_000 });
    expect(parseFleetArgs([]).operatorMaxRps).toBeUndefined();
  });

  test.each([
    [['--replicas', '1,9'], '--replicas: must be a comma-separated list'],
    [['--feeds', '0'], '--feeds: must be >= 1'],
    [['--feeds', '10', '--backlogged', '20'], '--backlogged: must be <= --feeds'],
    [['--lease-retry-ms', '10000'], '--lease-ttl-ms: must be at least twice --lease-retry-ms'],
    [['--nope'], "Unknown option '--nope'"],
  ])('%j is refused naming the flag', (argv, message) => {
    expect(() => parseFleetArgs(argv)).toThrow(message);
  });
});

import { describe, expect, test } from 'vitest';
import { feedNames, splitPrescriptions, summarizeFeedDrains, type FeedDrainLine } from '../../bench/many-feeds.js';
import { FEED_NAME_PATTERN } from '../../src/db/feed-name.js';

const line = (feed: string, events: number, elapsedMs: number, drained = true, matched = events): FeedDrainLine => ({
  feed,
  drained,
  pages: Math.ceil(events / 250),
  events,
  matched,
  elapsed_ms: elapsedMs,
});

describe('feedNames', () => {
  test('numbered, padded, valid FEEDS_FILE names', () => {
    expect(feedNames(3)).toEqual(['feed-1', 'feed-2', 'feed-3']);
    const twenty = feedNames(20);
    expect(twenty[0]).toBe('feed-01');
    expect(twenty[19]).toBe('feed-20');
    for (const name of twenty) expect(name).toMatch(FEED_NAME_PATTERN);
  });
});

describe('splitPrescriptions', () => {
  test.each([
    [50_000, 20, 2_500, 2_500],
    [501, 20, 26, 25],
    [3, 20, 1, 0],
  ])('%i over %i feeds: the first feeds take the remainder', (total, feeds, first, last) => {
    const split = splitPrescriptions(total, feeds);
    expect(split).toHaveLength(feeds);
    expect(split.reduce((a, b) => a + b, 0)).toBe(total);
    expect(split[0]).toBe(first);
    expect(split[feeds - 1]).toBe(last);
  });
});

describe('summarizeFeedDrains', () => {
  test("every feed's events over the slowest feed's drain", () => {
    const totals = summarizeFeedDrains([line('a', 10_000, 2_000), line('b', 10_000, 4_000), line('c', 5_000, 1_000)]);
    expect(totals).toMatchObject({ feeds: 3, events: 25_000, pages: 100, seconds: 4, events_per_s: 6_250 });
    expect(totals.per_feed_events_per_s.max).toBe(5_000);
    expect(totals.per_feed_events_per_s.count).toBe(3);
  });

  test('a feed that stopped before caught up fails the measurement, naming it', () => {
    expect(() => summarizeFeedDrains([line('a', 10, 5), line('b', 3, 5, false)])).toThrow(/many feeds: b stopped/);
  });

  test('a feed whose events did not all match (prescriptions registered in another feed) fails it, naming the feed', () => {
    expect(() => summarizeFeedDrains([line('a', 10, 5), line('b', 8, 5, true, 0)])).toThrow(/many feeds: b left events unmatched/);
  });
});

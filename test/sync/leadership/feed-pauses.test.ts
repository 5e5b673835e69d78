import { describe, expect, test } from 'vitest';
import { type FeedPause, FeedPauseBoard } from '../../../src/sync/leadership/feed-pauses.js';

const pause = (reason: string): FeedPause => ({ reason, pausedBy: 'ana@ops', pausedAt: '2026-01-01T00:00:00.000Z' });

function board(maxAgeMs = 500) {
  let now = 0;
  let reads = 0;
  let next: Map<string, FeedPause> | Error = new Map();
  const b = new FeedPauseBoard(
    async () => {
      reads += 1;
      if (next instanceof Error) throw next;
      return next;
    },
    maxAgeMs,
    () => now,
  );
  return {
    b,
    reads: () => reads,
    advance: (ms: number) => (now += ms),
    set: (value: Map<string, FeedPause> | Error) => (next = value),
  };
}

describe('FeedPauseBoard', () => {
  test('one read serves every feed within maxAgeMs; an older one is read again', async () => {
    const { b, reads, advance, set } = board();
    set(new Map([['a', pause('clinic_leaving')]]));
    expect(await Promise.all(['a', 'b', 'c'].map((feed) => b.pauseOf(feed)))).toEqual([pause('clinic_leaving'), null, null]);
    expect(reads()).toBe(1);
    set(new Map());
    advance(499);
    expect(await b.pauseOf('a')).toEqual(pause('clinic_leaving'));
    expect(reads()).toBe(1);
    advance(1);
    expect(await b.pauseOf('a')).toBeNull();
    expect(reads()).toBe(2);
  });

  test('a failed read keeps the last known pauses, and is not retried before maxAgeMs', async () => {
    const { b, reads, advance, set } = board();
    set(new Map([['a', pause('operator_review')]]));
    await b.pauseOf('a');
    advance(500);
    set(new Error('connection refused'));
    expect(await b.pauseOf('a')).toEqual(pause('operator_review'));
    expect(await b.pauseOf('a')).toEqual(pause('operator_review'));
    expect(reads()).toBe(2);
    expect([...b.known().keys()]).toEqual(['a']);
  });
});

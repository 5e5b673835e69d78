import { describe, expect, test } from 'vitest';
import { BacklogTracker, movedByOther, nonZeroReasons, QuarantineWarnings } from '../../../src/sync/activity/activity-decisions.js';

const counts = (unmatched: number, malformed = 0) => ({ malformed, unmatched, ambiguous: 0, unsupported_version: 0 });

describe('QuarantineWarnings', () => {
  test('the first page with findings warns at once; faster pages sum into one warning per interval; flush returns the rest', () => {
    const w = new QuarantineWarnings(5_000);
    expect(w.page(counts(0), 0)).toBeUndefined();
    expect(w.page(counts(3, 1), 100)).toEqual({ counts: counts(3, 1), events: 4, pages: 1 });
    expect(w.page(counts(250), 1_000)).toBeUndefined();
    expect(w.page(counts(250), 2_000)).toBeUndefined();
    expect(w.page(counts(10), 5_100)).toEqual({ counts: counts(510), events: 510, pages: 3 });
    expect(w.page(counts(7), 6_000)).toBeUndefined();
    expect(w.flush()).toEqual({ counts: counts(7), events: 7, pages: 1 });
    expect(w.flush()).toBeUndefined();
  });

  test('pages slower than the interval each warn', () => {
    const w = new QuarantineWarnings(1_000);
    for (const now of [0, 1_000, 2_500]) expect(w.page(counts(1), now)?.pages).toBe(1);
  });

  test('nonZeroReasons keeps only the reasons that happened', () => {
    expect(nonZeroReasons(counts(2, 1))).toEqual({ malformed: 1, unmatched: 2 });
  });
});

describe('BacklogTracker', () => {
  test.each([
    ['one done page: never a backlog', [{ received: 5, done: true }], undefined],
    [
      'full pages then a done one: events and time from the first page',
      [
        { received: 250, done: false },
        { received: 250, done: false },
        { received: 10, done: true },
      ],
      { events: 510, pages: 3, ms: 3_000 },
    ],
  ])('%s', (_name, pages, expected) => {
    const t = new BacklogTracker();
    let result: unknown;
    pages.forEach((page, i) => {
      // each page's fetch started 1 s before it was applied
      result = t.page(page, i * 1_000, (i + 1) * 1_000);
    });
    expect(result).toEqual(expected);
  });

  test('an empty done poll ends a backlog whose last page was full; a reset forgets it', () => {
    const t = new BacklogTracker();
    t.page({ received: 250, done: false }, 0, 500);
    expect(t.emptyPoll(false, 700)).toBeUndefined();
    expect(t.emptyPoll(true, 900)).toEqual({ events: 250, pages: 1, ms: 900 });
    t.page({ received: 250, done: false }, 1_000, 1_500);
    t.reset();
    expect(t.page({ received: 1, done: true }, 2_000, 2_100)).toBeUndefined();
  });
});

describe('movedByOther', () => {
  test.each([
    [undefined, { iterator: 'a', version: 3 }, false],
    [{ iterator: 'a', version: 3 }, { iterator: 'a', version: 3 }, false],
    [{ iterator: 'a', version: 3 }, { iterator: null, version: 4 }, true],
    [{ iterator: 'a', version: 3 }, { iterator: 'a', version: 9 }, true],
  ])('known %j, loaded %j: %s', (known, loaded, expected) => {
    expect(movedByOther(known, loaded)).toBe(expected);
  });
});

import { describe, expect, test } from 'vitest';
import {
  nextBatch,
  nextPassDelay,
  retentionCutoffs,
  shortRetentions,
  type BatchLimits,
  type BatchOutcome,
} from '../../../src/sync/retention/decisions.js';
import { RETENTION_CLASSES, type RetentionPolicy } from '../../../src/sync/retention/retention-classes.js';

const DAY = 86_400_000;
const forever = Object.fromEntries(RETENTION_CLASSES.map((c) => [c, null])) as unknown as RetentionPolicy;
const LIMITS: BatchLimits = { minRows: 10, maxRows: 1000, pauseMs: 50, backoffMs: 1000, maxBackoffMs: 8000 };

describe('retentionCutoffs', () => {
  const now = Date.parse('2025-06-01T00:00:00Z');
  test.each([
    ['event_bodies', 30 * DAY, '2025-05-02T00:00:00.000Z'],
    ['status_changes', 1000, '2025-05-31T23:59:59.000Z'],
    ['audit', null, null],
  ] as const)('%s kept %s: due before %s', (cls, keep, expected) => {
    const cutoffs = retentionCutoffs({ ...forever, [cls]: keep }, now);
    expect(cutoffs[cls]?.toISOString() ?? null).toBe(expected);
  });

  test('every class is forever: nothing is due', () => {
    expect(Object.values(retentionCutoffs(forever, now)).every((c) => c === null)).toBe(true);
  });
});

describe('shortRetentions', () => {
  test.each([
    [{ event_bodies: 1000 }, ['event_bodies']],
    [{ event_bodies: DAY }, []],
    [{ audit: DAY - 1, events: 12 * 3_600_000 }, ['events', 'audit']],
  ])('%o warns about %o', (overrides, expected) => {
    expect(shortRetentions({ ...forever, ...overrides })).toEqual(expected);
  });
});

describe('nextBatch', () => {
  const cases: [string, BatchOutcome, number, number, { again: boolean; rows: number; delayMs: number; streak: number }][] = [
    ['fewer rows than asked: the class is done', { kind: 'drained', rows: 3 }, 100, 0, { again: false, rows: 100, delayMs: 0, streak: 0 }],
    [
      'a full batch nobody waited on: again, twice as big, after a pause',
      { kind: 'full', rows: 100 },
      100,
      0,
      { again: true, rows: 200, delayMs: 50, streak: 0 },
    ],
    ['growth stops at maxRows', { kind: 'full', rows: 800 }, 800, 0, { again: true, rows: 1000, delayMs: 50, streak: 0 }],
    ['a full batch resets the streak', { kind: 'full', rows: 40 }, 40, 3, { again: true, rows: 80, delayMs: 50, streak: 0 }],
    [
      'page applies waited on a full batch: halve and back off',
      { kind: 'contended', rows: 100 },
      100,
      0,
      { again: true, rows: 50, delayMs: 1000, streak: 1 },
    ],
    ['contention again: the backoff doubles', { kind: 'contended', rows: 50 }, 50, 1, { again: true, rows: 25, delayMs: 2000, streak: 2 }],
    ['the backoff is capped', { kind: 'contended', rows: 10 }, 10, 6, { again: true, rows: 10, delayMs: 8000, streak: 7 }],
    [
      'a contended batch that drained its class is done',
      { kind: 'contended', rows: 7 },
      100,
      2,
      { again: false, rows: 50, delayMs: 0, streak: 0 },
    ],
    ['a timeout halves and backs off', { kind: 'timed_out' }, 1000, 0, { again: true, rows: 500, delayMs: 1000, streak: 1 }],
    ['never below minRows', { kind: 'timed_out' }, 12, 0, { again: true, rows: 10, delayMs: 1000, streak: 1 }],
    [
      'past maxStreak the class waits for the next pass',
      { kind: 'timed_out' },
      10,
      8,
      { again: false, rows: 10, delayMs: 8000, streak: 9 },
    ],
  ];
  test.each(cases)('%s', (_name, outcome, rows, streak, expected) => {
    expect(nextBatch(outcome, rows, streak, LIMITS)).toEqual(expected);
  });
});

describe('nextPassDelay', () => {
  test.each([
    ['a new leader waits the start delay', { passes: 0, failures: 0 }, 60_000],
    ['the start delay never exceeds the interval', { passes: 0, failures: 0 }, 60_000],
    ['after a pass: the interval', { passes: 3, failures: 0 }, 3_600_000],
    ['after a failure: the retry', { passes: 3, failures: 1 }, 5_000],
    ['failures double the retry', { passes: 3, failures: 3 }, 20_000],
    ['capped at the interval', { passes: 0, failures: 30 }, 3_600_000],
  ] as const)('%s', (_name, state, expected) => {
    expect(nextPassDelay(state, 3_600_000, 60_000, 5_000)).toBe(expected);
  });
  test('a short interval shortens the start delay', () => {
    expect(nextPassDelay({ passes: 0, failures: 0 }, 1_000, 60_000, 5_000)).toBe(1_000);
  });
});

import { describe, expect, test } from 'vitest';
import { formatDuration, parseDuration } from '../../src/lib/duration.js';

describe('parseDuration', () => {
  test.each([
    ['30d', 30 * 86_400_000],
    ['12h', 12 * 3_600_000],
    ['1s', 1_000],
    ['90m', 90 * 60_000],
    ['2w', 14 * 86_400_000],
    ['6y', 6 * 366 * 86_400_000],
    [' 7d ', 7 * 86_400_000],
    ['forever', null],
  ])('%j is %j ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  test.each(['', '0s', '30', 'd', '1.5d', '-1d', '30 days', '30D', 'never', '1ms', '201y', '9999999999d'])('%j is refused', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('formatDuration', () => {
  test.each([
    [null, 'forever'],
    [30 * 86_400_000, '30d'],
    [14 * 86_400_000, '2w'],
    [6 * 366 * 86_400_000, '6y'],
    [1_000, '1s'],
    [1_500, '1500ms'],
  ])('%j is %j', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

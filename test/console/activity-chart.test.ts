import { describe, expect, test } from 'vitest';
import { activityChart, bucketHour, hourlyBuckets } from '../../src/console/activity-chart.js';
import { sqlProblem } from '../../src/console/sql-problem.js';

describe('hourlyBuckets', () => {
  test('places each hour in its bucket, the current hour last, and drops older ones', () => {
    const now = Date.parse('2024-12-10T12:30:00Z');
    const buckets = hourlyBuckets(
      [
        { hour: new Date('2024-12-10T12:00:00Z'), events: 5 },
        { hour: new Date('2024-12-10T10:00:00Z'), events: 2 },
        { hour: new Date('2024-12-09T13:00:00Z'), events: 7 },
        { hour: new Date('2024-12-09T11:00:00Z'), events: 9 },
      ],
      now,
    );
    expect(buckets).toHaveLength(24);
    expect(buckets[23]).toBe(5);
    expect(buckets[21]).toBe(2);
    expect(buckets[0]).toBe(7);
    expect(buckets.reduce((a, b) => a + b, 0)).toBe(14);
  });

  test('the chart names its total for screen readers and escapes the label', () => {
    const svg = activityChart([1, 0, 3, ...new Array<number>(21).fill(0)], 'Feed <a>').text;
    expect(svg).toContain('aria-label="Feed &lt;a&gt;: 4 events in the last 24 hours, at most 3 in one hour"');
    expect(svg.match(/<rect /g)).toHaveLength(24);
  });

  test('labelled axes (events per hour with 0 and the highest hour; the hours, UTC) and the counts as text', () => {
    const now = Date.parse('2024-12-10T12:30:00Z');
    const chart = activityChart([1, 0, 3, ...new Array<number>(21).fill(0)], 'Feed a', now).text;
    expect(chart).toContain('>events/h</text>');
    expect(chart).toContain('>hour (UTC), last 24 h</text>');
    expect(chart).toMatch(/>3<\/text>/);
    expect(chart).toContain('>13:00</text>');
    expect(chart).toContain('>now</text>');
    // the text equivalent: each hour and its count
    expect(chart).toContain('<tr><td>13:00</td><td>1</td></tr><tr><td>14:00</td><td>0</td></tr><tr><td>15:00</td><td>3</td></tr>');
    expect(chart.match(/<tr><td>/g)).toHaveLength(24);
    expect(bucketHour(23, now)).toBe('12:00');
  });

  test('an empty day says 0, not a made-up maximum', () => {
    expect(activityChart(new Array<number>(24).fill(0), 'Feed a').text).toContain('at most 0 in one hour');
  });
});

describe('sqlProblem', () => {
  test.each([
    [{ code: '42501', message: 'feed: role x may not use feed "b"' }, 403, 'Your role may not do this (permission denied).'],
    [{ code: 'P0002', message: 'event_id: no quarantine finding' }, 404, 'Not found.'],
    [
      { code: 'P0002', message: 'external_id: no local prescription with this external_id in feed a' },
      400,
      'external_id: no local prescription with this external_id in feed a',
    ],
    [{ code: '22023', message: 'reason: must be a code' }, 400, 'reason: must be a code'],
    [
      { code: '55000', message: 'event_id: the finding is already closed (dismissed)' },
      409,
      'event_id: the finding is already closed (dismissed)',
    ],
    [
      { code: 'XX000', message: 'secret detail Ada Lovelace' },
      500,
      'The database refused the request; the console log names the error code.',
    ],
  ])('%j', (error, status, message) => {
    expect(sqlProblem(error)).toEqual({ status, message });
  });
});

import { describe, expect, test } from 'vitest';
import { formatCapped } from '../../../src/console/format.js';
import { feedState } from '../../../src/console/pages/feeds.js';
import { html } from '../../../src/console/html.js';
import { COUNTED_AT_MOST, overdueCell } from '../../../src/console/pages/overdue.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const row = (overrides: Record<string, unknown> = {}) =>
  ({
    feed: 'clinic-a',
    origin: 'operator',
    position_moved_at: new Date(NOW),
    events_applied: '0',
    last_event_received_at: null,
    last_event_occurred_at: null,
    open_findings_capped: {},
    outbox_pending: '0',
    outbox_failed: '0',
    leader_since: new Date(NOW - 60_000),
    leader_heartbeat_at: new Date(NOW - 1_000),
    leader_expires_at: new Date(NOW + 10_000),
    stopped_at: null,
    stop_reason: null,
    stop_command: null,
    // the lease as feed_overview judges it, by the database's clock (issue 34 §6)
    leader_alive: true,
    leader_heartbeat_age_s: 1,
    leader_lapsed_s: -10,
    source_api_version: null,
    pages_applied: '0',
    ...overrides,
  }) as Parameters<typeof feedState>[0];

// the Feeds page's state cell for the feed_overview columns of 0027 (feeds pause, a FEEDS_FILE reload's removal)
describe('feedState', () => {
  test.each([
    ['running', {}, /^running<br>/],
    [
      'paused, with the reason code and the lease kept',
      { paused_at: new Date(NOW - 3_600_000), pause_reason: 'clinic_leaving' },
      /<strong>paused<\/strong> since .*: clinic_leaving<br><small>a worker leads it/,
    ],
    [
      'paused beats stopped',
      { pause_reason: 'operator_review', paused_at: new Date(NOW), stop_reason: 'x', stopped_at: new Date(NOW) },
      /paused<\/strong>/,
    ],
    [
      'retired beats everything',
      { retired_at: new Date(NOW), pause_reason: 'clinic_leaving', paused_at: new Date(NOW) },
      /^retired since .*removed from FEEDS_FILE/,
    ],
    [
      'stopped, as before',
      { stop_reason: 'stopped consuming: 401', stopped_at: new Date(NOW) },
      /<strong class="stopped">stopped<\/strong>/,
    ],
  ])('%s', (_label, overrides, expected) => {
    expect(feedState(row(overrides)).text).toMatch(expected);
  });
});

// The Feeds page's counts stop at COUNTED_AT_MOST + 1 (feed_overview.open_findings_capped, overdue_counts:
// issue 34 §6); above it the page says "more than", never a figure nobody counted.
describe('capped counts', () => {
  test('exact up to the bound, "more than" past it', () => {
    expect(COUNTED_AT_MOST).toBe(1000);
    expect(formatCapped(0, COUNTED_AT_MOST)).toBe('0');
    expect(formatCapped(1000, COUNTED_AT_MOST)).toBe('1000');
    expect(formatCapped(1001, COUNTED_AT_MOST)).toBe('more than 1000');
  });

  test("the overdue cell says each stage's capped count and links to its list", () => {
    const cell = overdueCell(
      'clinic-a',
      new Map([
        ['sent', 1001],
        ['accepted', 7],
        ['ordered', 0],
      ]),
    );
    const text = html`${cell}`.text;
    expect(text).toContain('<a href="/overdue?feed=clinic-a&amp;stage=sent">sent: more than 1000</a>');
    expect(text).toContain('accepted: 7</a>');
    expect(text).not.toContain('ordered');
  });
});

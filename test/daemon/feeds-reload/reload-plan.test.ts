import { describe, expect, test } from 'vitest';
import type { FeedConfig } from '../../../src/config/feeds-file.js';
import { planChanges, planReload, planSummary, sameFeed } from '../../../src/daemon/feeds-reload/reload-plan.js';

const feed = (name: string, overrides: Partial<FeedConfig> = {}): FeedConfig => ({
  name,
  baseUrl: 'https://op.example/intake_api/2024-12-10',
  apiKey: `key-${name}`,
  apiSecret: `secret-${name}`,
  ...overrides,
});

const names = (plan: ReturnType<typeof planReload>) => planSummary(plan);

describe('planReload', () => {
  test.each<[string, FeedConfig[], FeedConfig[], ReturnType<typeof planSummary>]>([
    ['the same file: nothing', [feed('a'), feed('b')], [feed('a'), feed('b')], { started: [], stopped: [], restarted: [], unchanged: 2 }],
    ['reordered: nothing', [feed('a'), feed('b')], [feed('b'), feed('a')], { started: [], stopped: [], restarted: [], unchanged: 2 }],
    ['a feed added', [feed('a')], [feed('a'), feed('b')], { started: ['b'], stopped: [], restarted: [], unchanged: 1 }],
    ['a feed removed', [feed('a'), feed('b')], [feed('b')], { started: [], stopped: ['a'], restarted: [], unchanged: 1 }],
    [
      'a rotated secret',
      [feed('a'), feed('b')],
      [feed('a', { apiSecret: 'rotated' }), feed('b')],
      { started: [], stopped: [], restarted: ['a'], unchanged: 1 },
    ],
    ['a new key', [feed('a')], [feed('a', { apiKey: 'k2' })], { started: [], stopped: [], restarted: ['a'], unchanged: 0 }],
    [
      'a moved base URL',
      [feed('a')],
      [feed('a', { baseUrl: 'https://op.example/intake_api/2025-06-01' })],
      { started: [], stopped: [], restarted: ['a'], unchanged: 0 },
    ],
    [
      'a retention of its own',
      [feed('a')],
      [feed('a', { retain: { events: 86_400_000 } })],
      { started: [], stopped: [], restarted: ['a'], unchanged: 0 },
    ],
    [
      'retention keys reordered: nothing',
      [feed('a', { retain: { events: 1, audit: null } })],
      [feed('a', { retain: { audit: null, events: 1 } })],
      { started: [], stopped: [], restarted: [], unchanged: 1 },
    ],
    [
      'a deadline turned off',
      [feed('a', { overdue: { sent: 1 } })],
      [feed('a', { overdue: { sent: null } })],
      { started: [], stopped: [], restarted: ['a'], unchanged: 0 },
    ],
    [
      'all at once',
      [feed('a'), feed('b'), feed('c')],
      [feed('d'), feed('c', { apiSecret: 'x' }), feed('a')],
      { started: ['d'], stopped: ['b'], restarted: ['c'], unchanged: 1 },
    ],
    ['every feed replaced', [feed('a')], [feed('b')], { started: ['b'], stopped: ['a'], restarted: [], unchanged: 0 }],
  ])('%s', (_label, running, next, expected) => {
    expect(names(planReload(running, next))).toEqual(expected);
  });

  test('the restarted feed carries its new values; the plan says whether anything changes', () => {
    const plan = planReload([feed('a')], [feed('a', { apiSecret: 'rotated' })]);
    expect(plan.restart[0]?.apiSecret).toBe('rotated');
    expect(planChanges(plan)).toBe(true);
    expect(planChanges(planReload([feed('a')], [feed('a')]))).toBe(false);
  });

  test('sameFeed ignores absent optional fields but not an empty object', () => {
    expect(sameFeed(feed('a'), { ...feed('a'), retain: undefined })).toBe(true);
    expect(sameFeed(feed('a'), feed('a', { retain: {} }))).toBe(false);
  });

  test('the summary names feeds, never their secrets', () => {
    const text = JSON.stringify(planSummary(planReload([feed('a')], [feed('a', { apiSecret: 'new-secret' }), feed('b')])));
    expect(text).not.toMatch(/secret|key-/);
  });
});

import { describe, expect, test } from 'vitest';
import { type FeedOverviewFacts, rosterRow } from '../../../src/sync/leadership/feed-roster.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const facts = (overrides: Partial<FeedOverviewFacts> = {}): FeedOverviewFacts => ({
  feed: 'clinic-a',
  leader: 'intake-sync[42]@host-a lease',
  leader_expires_at: '2026-01-01T12:00:10Z',
  last_event_occurred_at: '2026-01-01T11:59:00Z',
  open_findings: {},
  stopped_at: null,
  stop_reason: null,
  paused_at: null,
  pause_reason: null,
  paused_by: null,
  retired_at: null,
  ...overrides,
});

describe('rosterRow', () => {
  test.each<[string, Partial<FeedOverviewFacts>, { state: string; why: string | null; leader: string | null }]>([
    ['a live lease: running', {}, { state: 'running', why: null, leader: 'intake-sync[42]@host-a lease' }],
    ['an expired lease: no leader', { leader_expires_at: '2026-01-01T11:59:59Z' }, { state: 'no leader', why: null, leader: null }],
    ['no lease row: no leader', { leader: null, leader_expires_at: null }, { state: 'no leader', why: null, leader: null }],
    [
      'paused: the reason, the lease still shown',
      { paused_at: '2026-01-01T10:00:00Z', pause_reason: 'clinic_leaving', paused_by: 'ana@ops' },
      { state: 'paused', why: 'clinic_leaving', leader: 'intake-sync[42]@host-a lease' },
    ],
    [
      'stopped by its worker: its words',
      { stopped_at: '2026-01-01T11:00:00Z', stop_reason: 'stopped consuming: the operator refused the credentials (401)' },
      { state: 'stopped', why: 'stopped consuming: the operator refused the credentials (401)', leader: 'intake-sync[42]@host-a lease' },
    ],
    [
      'paused beats stopped',
      { stopped_at: '2026-01-01T11:00:00Z', stop_reason: 'x', paused_at: '2026-01-01T11:30:00Z', pause_reason: 'operator_review' },
      { state: 'paused', why: 'operator_review', leader: 'intake-sync[42]@host-a lease' },
    ],
    [
      'retired beats everything',
      { retired_at: '2026-01-01T11:00:00Z', paused_at: '2026-01-01T10:00:00Z', pause_reason: 'clinic_leaving', leader_expires_at: null },
      { state: 'retired', why: null, leader: null },
    ],
  ])('%s', (_label, overrides, expected) => {
    expect(rosterRow(facts(overrides), NOW)).toMatchObject(expected);
  });

  test('lag is the age of the newest applied event; open findings are summed over reasons', () => {
    expect(rosterRow(facts({ open_findings: { unmatched: 3, malformed: 2 } }), NOW)).toMatchObject({ lag_seconds: 60, open_findings: 5 });
    expect(rosterRow(facts({ last_event_occurred_at: null }), NOW).lag_seconds).toBeNull();
    // an operator clock ahead of ours is no negative lag
    expect(rosterRow(facts({ last_event_occurred_at: '2026-01-01T12:00:05Z' }), NOW).lag_seconds).toBe(0);
  });

  test('paused_by and since belong to the state shown', () => {
    const paused = rosterRow(facts({ paused_at: '2026-01-01T10:00:00Z', pause_reason: 'r', paused_by: 'ana@ops' }), NOW);
    expect(paused).toMatchObject({ paused_by: 'ana@ops', since: '2026-01-01T10:00:00Z' });
    expect(rosterRow(facts({ paused_by: 'stale' }), NOW)).toMatchObject({ paused_by: null, since: null });
  });
});

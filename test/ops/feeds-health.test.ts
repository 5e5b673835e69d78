import { describe, expect, it } from 'vitest';
import { evaluateFeedsLiveness, evaluateFeedsReadiness, processRole } from '../../src/ops/feeds-health.js';
import { emptyTotals } from '../../src/sync/state/worker-totals.js';
import type { WorkerRole, WorkerSnapshot } from '../../src/sync/state/worker-snapshot.js';

const NOW = 1_000_000;
const thresholds = { maxPollAgeMs: 60_000, maxFailures: 5 };

function snapshot(overrides: Partial<WorkerSnapshot> = {}): WorkerSnapshot {
  return {
    role: 'leader',
    loopAlive: true,
    loopDeathReason: null,
    fatalReason: null,
    cursorProblem: null,
    leaderSince: NOW - 120_000,
    lastSuccessAt: NOW - 1_000,
    lastPollAt: NOW - 1_000,
    newestOccurredAt: null,
    consecutiveFailures: 0,
    lastFailure: null,
    matchLockWaitSince: null,
    lockBlocked: null,
    noProgressStreak: 0,
    backlog: false,
    checkpoint: null,
    sources: [],
    totals: emptyTotals(),
    ...overrides,
  };
}

const ok = snapshot();
const unauthorized = snapshot({ fatalReason: '401 from the operator' });
const standby = snapshot({ role: 'standby', leaderSince: null, lastSuccessAt: null });
const dead = snapshot({ loopAlive: false, loopDeathReason: 'TypeError: boom' });

describe('evaluateFeedsReadiness', () => {
  const cases: Array<{
    name: string;
    feeds: Array<[string, WorkerSnapshot]>;
    db?: boolean;
    ready: boolean;
    reasons: string[];
    role: WorkerRole;
  }> = [
    { name: 'one feed, fine', feeds: [['default', ok]], ready: true, reasons: [], role: 'leader' },
    // one feed: reasons read as they always did, without a prefix
    {
      name: 'one feed, 401',
      feeds: [['default', unauthorized]],
      ready: false,
      reasons: ['stopped consuming: 401 from the operator'],
      role: 'leader',
    },
    {
      name: 'two feeds, fine',
      feeds: [
        ['west', ok],
        ['east', ok],
      ],
      ready: true,
      reasons: [],
      role: 'leader',
    },
    {
      name: 'two feeds, east 401: only east is named',
      feeds: [
        ['west', ok],
        ['east', unauthorized],
      ],
      ready: false,
      reasons: ['feed east: stopped consuming: 401 from the operator'],
      role: 'leader',
    },
    {
      name: 'a replica leading none of the feeds is a ready standby',
      feeds: [
        ['west', standby],
        ['east', standby],
      ],
      ready: true,
      reasons: [],
      role: 'standby',
    },
    {
      name: 'database down: said once, not per feed',
      feeds: [
        ['west', ok],
        ['east', ok],
      ],
      db: false,
      ready: false,
      reasons: ['database unreachable'],
      role: 'leader',
    },
  ];
  it.each(cases)('$name', ({ feeds, db, ready, reasons, role }) => {
    const result = evaluateFeedsReadiness(
      feeds.map(([feed, s]) => ({ feed, snapshot: s })),
      db ?? true,
      thresholds,
      NOW,
    );
    expect({ ready: result.ready, reasons: result.reasons, role: result.role }).toEqual({ ready, reasons, role });
    for (const [feed, s] of feeds) expect(result.feeds[feed]?.role).toBe(s.role);
  });

  it('gives each feed its own detail', () => {
    const result = evaluateFeedsReadiness(
      [
        { feed: 'west', snapshot: ok },
        { feed: 'east', snapshot: unauthorized },
      ],
      true,
      thresholds,
      NOW,
    );
    expect(result.feeds.west).toMatchObject({ status: 'ready', reasons: [] });
    expect(result.feeds.east).toMatchObject({ status: 'not ready', reasons: ['stopped consuming: 401 from the operator'] });
  });
});

describe('evaluateFeedsLiveness', () => {
  it.each<{ name: string; feeds: Array<[string, WorkerSnapshot]>; alive: boolean; reasons: string[] }>([
    {
      name: 'a 401 is alive',
      feeds: [
        ['west', ok],
        ['east', unauthorized],
      ],
      alive: true,
      reasons: [],
    },
    { name: 'one feed whose loop died', feeds: [['default', dead]], alive: false, reasons: ['worker loop died: TypeError: boom'] },
    {
      name: 'a dead loop among several is named',
      feeds: [
        ['west', ok],
        ['east', dead],
      ],
      alive: false,
      reasons: ['feed east: worker loop died: TypeError: boom'],
    },
  ])('$name', ({ feeds, alive, reasons }) => {
    expect(evaluateFeedsLiveness(feeds.map(([feed, s]) => ({ feed, snapshot: s })))).toEqual({ alive, reasons });
  });
});

describe('processRole', () => {
  it.each<[WorkerRole[], WorkerRole]>([
    [['leader'], 'leader'],
    [['standby', 'leader'], 'leader'],
    [['standby', 'starting'], 'standby'],
    [['starting', 'stopped'], 'starting'],
    [['stopped', 'stopped'], 'stopped'],
    [[], 'stopped'],
  ])('%j -> %s', (roles, expected) => {
    expect(processRole(roles)).toBe(expected);
  });
});

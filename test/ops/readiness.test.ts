import { describe, expect, it } from 'vitest';
import { evaluateLiveness } from '../../src/ops/liveness.js';
import { defaultMaxPollAgeMs, evaluateReadiness } from '../../src/ops/readiness.js';
import { emptyTotals } from '../../src/sync/state/worker-totals.js';
import type { WorkerSnapshot } from '../../src/sync/state/worker-snapshot.js';

const NOW = 1_000_000;
const thresholds = { maxPollAgeMs: 60_000, maxFailures: 5 };

function snapshot(overrides: Partial<WorkerSnapshot>): WorkerSnapshot {
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

describe('evaluateReadiness', () => {
  const cases: Array<{ name: string; state: Partial<WorkerSnapshot>; db?: boolean; reasons: RegExp[] }> = [
    { name: 'leader polling fine', state: {}, reasons: [] },
    { name: 'page waiting briefly for the match lock', state: { matchLockWaitSince: NOW - 4_999 }, reasons: [] },
    {
      name: 'page waiting long for the match lock',
      state: { matchLockWaitSince: NOW - 7_000 },
      reasons: [/^page waiting 7s for the match lock of its feed \(the holder is named if the wait times out\)$/],
    },
    {
      name: 'one page timed out on a lock: not yet reported',
      state: { lockBlocked: { lock: 'the match lock of feed a (feed_locks), held by backend pid 7', since: NOW - 10_000, failures: 1 } },
      reasons: [],
    },
    {
      name: 'pages keep failing on a lock: the lock and its holder as the server named them',
      state: {
        lockBlocked: {
          lock: "the change clock of feed a (change_clocks), held by backend pid 7 (role app_a, application_name 'billing')",
          since: NOW - 20_000,
          failures: 2,
        },
      },
      reasons: [
        /^blocked: 2 pages in a row timed out waiting for the change clock of feed a \(change_clocks\), held by backend pid 7 \(role app_a, application_name 'billing'\) \(retrying\)$/,
      ],
    },
    { name: 'standby that never polled', state: { role: 'standby', leaderSince: null, lastSuccessAt: null }, reasons: [] },
    {
      name: 'new leader before its first poll: not ready yet',
      state: { leaderSince: NOW - 10_000, lastSuccessAt: null },
      reasons: [/^no poll yet \(leader for 10s\)$/],
    },
    { name: 'database down', state: {}, db: false, reasons: [/database unreachable/] },
    { name: 'stale poll', state: { lastSuccessAt: NOW - 61_000 }, reasons: [/last successful poll 61s ago \(limit 60s\)/] },
    {
      name: 'new leader never polled',
      state: { leaderSince: NOW - 90_000, lastSuccessAt: null },
      reasons: [/^no poll yet \(leader for 90s\)$/],
    },
    {
      name: 'the operator came back and refused the position: only that, not the failures before it',
      state: {
        cursorProblem: { feed: 'east', kind: 'refused', since: NOW },
        consecutiveFailures: 7,
        lastFailure: { source: 'upstream', summary: 'UpstreamError: GET /events: network error ECONNREFUSED', at: NOW - 5_000 },
      },
      reasons: [/^feed east stopped consuming: the operator refuses the stored iterator \(400\); run `intake-sync resync --feed east`/],
    },
    {
      name: '401 after failures: only the 401',
      state: { fatalReason: 'UnauthorizedError: GET /events: 401 Unauthorized', consecutiveFailures: 9 },
      reasons: [/stopped consuming: UnauthorizedError/],
    },
    {
      name: 'failures at the threshold',
      state: {
        consecutiveFailures: 5,
        lastFailure: { source: 'upstream', summary: 'UpstreamError: GET /events: 503 from the operator', at: NOW },
      },
      reasons: [/5 consecutive poll failures \(last, upstream: UpstreamError/],
    },
    { name: 'failures under the threshold', state: { consecutiveFailures: 4 }, reasons: [] },
    {
      name: 'feed stopped on an expired cursor (its stale poll is not repeated)',
      state: { cursorProblem: { feed: 'east', kind: 'expired', since: NOW - 600_000 }, lastSuccessAt: NOW - 600_000 },
      reasons: [/^feed east stopped consuming: the operator says the stored iterator expired .*intake-sync resync --feed east/],
    },
    {
      name: 'feed stopped on a suspected gap',
      state: { cursorProblem: { feed: 'default', kind: 'gap-suspected', since: NOW } },
      reasons: [/^feed default stopped consuming: no page was committed for longer than FEED_RETENTION_MS/],
    },
    {
      name: 'feed stopped on an iterator a manual reset set: undo the reset, not resync (issue 17 §2)',
      state: {
        cursorProblem: {
          feed: 'east',
          kind: 'refused',
          since: NOW,
          reset: { previous: 'it-41', by: 'ana@ops', at: new Date(NOW - 60_000) },
        },
      },
      reasons: [/^feed east stopped consuming: the operator refuses the iterator that `checkpoint reset` set .*--feed east --to it-41`/],
    },
    {
      name: '404 on /events: stopped, naming the URL',
      state: {
        fatalReason: 'EventsNotFoundError: GET https://op.example/api/events answered 404 Not Found: the operator base URL is wrong',
      },
      reasons: [/stopped consuming: EventsNotFoundError: GET https:\/\/op.example\/api\/events answered 404/],
    },
    {
      name: '401: stopped for good, staleness not reported on top',
      state: { fatalReason: 'UnauthorizedError: GET /events: 401 Unauthorized', lastSuccessAt: NOW - 600_000 },
      reasons: [/stopped consuming: UnauthorizedError/],
    },
    { name: 'starting', state: { role: 'starting', leaderSince: null, lastSuccessAt: null }, reasons: [/worker starting/] },
    { name: 'stopped', state: { role: 'stopped', leaderSince: null }, reasons: [/worker stopped/] },
    { name: 'loop died', state: { loopAlive: false, loopDeathReason: 'TypeError' }, reasons: [/worker loop died: TypeError/] },
  ];
  it.each(cases)('$name', ({ state, db, reasons }) => {
    const readiness = evaluateReadiness(snapshot(state), db ?? true, thresholds, NOW);
    expect(readiness.ready).toBe(reasons.length === 0);
    expect(readiness.reasons).toHaveLength(reasons.length);
    reasons.forEach((pattern, i) => expect(readiness.reasons[i]).toMatch(pattern));
  });

  it('the default poll age is three intervals, never under a minute, unless configured', () => {
    expect(defaultMaxPollAgeMs(5_000)).toBe(60_000);
    expect(defaultMaxPollAgeMs(60_000)).toBe(180_000);
    expect(defaultMaxPollAgeMs(5_000, 10_000)).toBe(10_000);
  });
});

describe('evaluateLiveness', () => {
  it.each([
    { name: 'backing off', state: { consecutiveFailures: 50 }, alive: true },
    { name: 'standby', state: { role: 'standby' as const }, alive: true },
    { name: 'parked after a 401', state: { fatalReason: 'UnauthorizedError' }, alive: true },
    { name: 'loop died', state: { loopAlive: false, loopDeathReason: 'TypeError' }, alive: false },
  ])('$name → alive $alive', ({ state, alive }) => {
    expect(evaluateLiveness(snapshot(state)).alive).toBe(alive);
  });
});

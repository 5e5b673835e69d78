import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../src/intake/errors/bad-request-error.js';
import { UnauthorizedError } from '../../../src/intake/errors/unauthorized-error.js';
import { UpstreamError } from '../../../src/intake/errors/upstream-error.js';
import { EXPIRED_ITERATOR_MESSAGE } from '../../../src/sandbox/retention.js';
import {
  classifyEventsFailure,
  describeCursorProblem,
  resetToBlame,
  eventsFailureFacts,
  checkpointNeedsTouch,
  suspectsGap,
  type EventsFailureFacts,
} from '../../../src/sync/state/cursor-problem.js';

const context = { method: 'GET', path: '/events' };

describe('classifyEventsFailure', () => {
  it.each<[string, EventsFailureFacts, ReturnType<typeof classifyEventsFailure>]>([
    ['the sandbox expiry message', { status: 400, serverMessage: EXPIRED_ITERATOR_MESSAGE, iteratorSent: true }, 'expired'],
    ['"expired" in other words', { status: 400, serverMessage: 'Iterator EXPIRED', iteratorSent: true }, 'expired'],
    ['"retention"', { status: 400, serverMessage: 'position is outside the retention window', iteratorSent: true }, 'expired'],
    ['"no longer available"', { status: 400, serverMessage: 'events no longer available', iteratorSent: true }, 'expired'],
    ['"too old"', { status: 400, serverMessage: 'cursor too old', iteratorSent: true }, 'expired'],
    ['another reason', { status: 400, serverMessage: 'iterator is not valid for this feed', iteratorSent: true }, 'refused'],
    ['an empty message', { status: 400, serverMessage: '', iteratorSent: true }, 'refused'],
    ['no iterator sent: not our position', { status: 400, serverMessage: EXPIRED_ITERATOR_MESSAGE, iteratorSent: false }, null],
    ['no {error} body (a proxy page)', { status: 400, serverMessage: undefined, iteratorSent: true }, null],
    ['401', { status: 401, serverMessage: 'iterator expired', iteratorSent: true }, null],
    ['404', { status: 404, serverMessage: 'expired', iteratorSent: true }, null],
    ['410 (not what the spec lists)', { status: 410, serverMessage: 'expired', iteratorSent: true }, null],
    ['503', { status: 503, serverMessage: undefined, iteratorSent: true }, null],
    ['no answer', { status: undefined, serverMessage: undefined, iteratorSent: true }, null],
  ])('%s', (_label, facts, expected) => {
    expect(classifyEventsFailure(facts)).toBe(expected);
  });
});

describe('eventsFailureFacts', () => {
  it.each<[string, unknown, boolean, EventsFailureFacts]>([
    ['400 with a message', new BadRequestError(context, 'expired'), true, { status: 400, serverMessage: 'expired', iteratorSent: true }],
    ['400 without one', new BadRequestError(context, undefined), false, { status: 400, serverMessage: undefined, iteratorSent: false }],
    ['401', new UnauthorizedError(context, 'no'), true, { status: 401, serverMessage: undefined, iteratorSent: true }],
    ['503', new UpstreamError(context, 503, undefined), true, { status: 503, serverMessage: undefined, iteratorSent: true }],
    ['a plain error', new Error('socket hang up'), true, { status: undefined, serverMessage: undefined, iteratorSent: true }],
    ['not an error', null, true, { status: undefined, serverMessage: undefined, iteratorSent: true }],
  ])('%s', (_label, error, iteratorSent, expected) => {
    expect(eventsFailureFacts(error, iteratorSent)).toEqual(expected);
  });
});

describe('suspectsGap', () => {
  const HOUR = 3_600_000;
  it.each<[string, string | null, number, number | undefined, boolean]>([
    ['retention not configured', 'it', 100 * HOUR, undefined, false],
    ['no position yet (reads from the oldest retained)', null, 100 * HOUR, HOUR, false],
    ['idle less than the retention', 'it', HOUR - 1, HOUR, false],
    ['idle exactly the retention', 'it', HOUR, HOUR, true],
    ['idle longer', 'it', 5 * HOUR, HOUR, true],
  ])('%s', (_label, iterator, idleMs, retentionMs, expected) => {
    const now = 1_000 * HOUR;
    expect(suspectsGap({ iterator, updatedAtMs: now - idleMs }, now, retentionMs)).toBe(expected);
  });
});

describe('checkpointNeedsTouch', () => {
  const HOUR = 3_600_000;
  it.each<[string, number, number | undefined, boolean]>([
    ['retention not configured: an empty poll writes nothing', 100 * HOUR, undefined, false],
    ['stamped less than a twentieth of the retention ago', (20 * HOUR) / 20 - 1, 20 * HOUR, false],
    ['stamped a twentieth of the retention ago', (20 * HOUR) / 20, 20 * HOUR, true],
    ['the shortest retention allowed (60 s): every 3 s', 3_000, 60_000, true],
  ])('%s', (_label, ageMs, retentionMs, expected) => {
    const now = 1_000 * HOUR;
    expect(checkpointNeedsTouch(now - ageMs, now, retentionMs)).toBe(expected);
  });
});

describe('describeCursorProblem', () => {
  it('names the feed and the fix', () => {
    expect(describeCursorProblem('east', 'expired')).toContain('intake-sync resync --feed east');
    expect(describeCursorProblem('east', 'gap-suspected')).toMatch(/^feed east stopped consuming: .*FEED_RETENTION_MS/);
  });
});

describe('a refused iterator that a manual reset set (issue 17 §2)', () => {
  const at = new Date('2026-01-02T03:04:05Z');
  it('resetToBlame: only the latest manual reset that set exactly the refused iterator', () => {
    const reset = { from: 'it-41', to: 'garbage!!', by: 'ana@ops', at };
    expect(resetToBlame('garbage!!', reset)).toEqual({ previous: 'it-41', by: 'ana@ops', at });
    expect(resetToBlame('it-50', reset)).toBeNull();
    expect(resetToBlame(null, reset)).toBeNull();
    expect(resetToBlame('garbage!!', null)).toBeNull();
    expect(resetToBlame('garbage!!', { ...reset, by: 'embedded-sandbox' })).toBeNull();
  });

  it('describeCursorProblem suggests undoing the reset with the previous position, not resync', () => {
    const text = describeCursorProblem('east', 'refused', { reset: { previous: 'it-41', by: 'ana@ops', at } });
    expect(text).toContain('undo the reset with `intake-sync checkpoint reset --feed east --to it-41`');
    expect(text).toContain('2026-01-02T03:04:05.000Z (by ana@ops)');
    expect(text).not.toContain('intake-sync resync');
    expect(describeCursorProblem('east', 'expired', { reset: { previous: null, by: 'ana@ops', at } })).toContain('--feed east --beginning');
  });
});

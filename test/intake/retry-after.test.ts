import { describe, expect, it } from 'vitest';
import { NetworkError, UpstreamError } from '../../src/intake/errors/index.js';
import { MAX_RETRY_AFTER_MS, parseRetryAfter, retryDelay } from '../../src/intake/retry-after.js';

const policy = { baseMs: 100, capMs: 1_000 };
const context = { method: 'GET', path: '/events' };
const fixed = (value: number) => () => value;

describe('parseRetryAfter', () => {
  const now = Date.parse('2024-12-10T12:00:00Z');
  it.each<[string | null, number | undefined]>([
    [null, undefined],
    ['', undefined],
    ['   ', undefined],
    ['0', 0],
    ['3', 3_000],
    [' 120 ', 120_000],
    ['-5', undefined],
    ['1.5', undefined],
    ['soon', undefined],
    ['5 minutes', undefined],
    ['2024', 2_024_000], // digits are always delta-seconds, never a year
    ['99999999', MAX_RETRY_AFTER_MS],
    ['Tue, 10 Dec 2024 12:00:30 GMT', 30_000],
    ['Tuesday, 10-Dec-24 12:00:30 GMT', 30_000], // RFC 850 form
    ['Tue Dec 10 12:00:30 2024', 30_000], // asctime form: GMT although no zone is written
    ['Tue, 10 Dec 2024 11:59:00 GMT', 0], // in the past: retry now
    ['Tue, 10 Dec 2025 12:00:00 GMT', MAX_RETRY_AFTER_MS],
    ['Tue, 99 Foo 2024 12:00:00 GMT', undefined],
  ])('%j -> %j', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe('retryDelay', () => {
  it.each([
    ['a 429 with Retry-After waits at least that long', new UpstreamError(context, 429, 2_000), 0, 0, 2_000],
    ['the jitter on top of Retry-After stays below baseMs', new UpstreamError(context, 503, 2_000), 5, 0.999, 2_099],
    ['Retry-After is honoured even beyond capMs', new UpstreamError(context, 429, 30_000), 0, 0.5, 30_050],
    ['a 500 without Retry-After uses full jitter', new UpstreamError(context, 500, undefined), 2, 0.5, 200],
    ['a network error uses full jitter', new NetworkError(context, 'ECONNRESET'), 1, 0.5, 100],
  ])('%s', (_label, error, attempt, random, expected) => {
    expect(retryDelay(attempt, policy, error, fixed(random))).toBe(expected);
  });
});

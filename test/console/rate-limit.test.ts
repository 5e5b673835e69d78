import { describe, expect, test } from 'vitest';
import { csrfTokenMatches } from '../../src/console/csrf.js';
import { AttemptLimiter } from '../../src/console/rate-limit.js';

describe('AttemptLimiter', () => {
  test('refuses a key at its limit of failures until the window passes; a success resets the role', () => {
    let now = 0;
    const limiter = new AttemptLimiter({ max: 3, windowMs: 60_000 }, () => now);
    const keys = ['ip:10.0.0.1', 'role:staff'];
    for (let i = 0; i < 3; i++) {
      expect(limiter.allow(keys)).toBe(true);
      limiter.fail(keys);
      now += 1_000;
    }
    expect(limiter.allow(keys)).toBe(false);
    // the same role from another address is refused too (per role), another role from this address too (per IP)
    expect(limiter.allow(['ip:10.0.0.2', 'role:staff'])).toBe(false);
    expect(limiter.allow(['ip:10.0.0.1', 'role:other'])).toBe(false);
    expect(limiter.allow(['ip:10.0.0.2', 'role:other'])).toBe(true);
    now = 60_000;
    expect(limiter.allow(keys)).toBe(true);
  });

  test('keeps at most maxKeys keys, dropping the oldest', () => {
    const limiter = new AttemptLimiter({ max: 1, windowMs: 60_000 }, () => 0, 2);
    limiter.fail(['a']);
    limiter.fail(['b']);
    limiter.fail(['c']);
    expect(limiter.allow(['a'])).toBe(true);
    expect(limiter.allow(['c'])).toBe(false);
  });
});

describe('csrfTokenMatches', () => {
  test.each([
    ['abc', 'abc', true],
    ['abc', 'abd', false],
    ['abc', 'abcd', false],
    ['abc', undefined, false],
    ['abc', '', false],
    [undefined, undefined, false],
    ['', '', false],
    ['abc', ['abc'], false],
  ])('%j vs %j: %s', (expected, submitted, ok) => {
    expect(csrfTokenMatches(expected as string | undefined, submitted)).toBe(ok);
  });
});

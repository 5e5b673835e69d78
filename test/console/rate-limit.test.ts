import { describe, expect, test } from 'vitest';
import { csrfTokenMatches } from '../../src/console/csrf.js';
import { backoffAfter, type Limited, SIGN_IN_LIMITS, SignInLimiter, type SignInLimits, type Ticket } from '../../src/console/rate-limit.js';

const LIMITS: SignInLimits = { perAddress: 3, windowMs: 60_000, attackedRole: 4, backoffMs: 1_000, backoffMaxMs: 8_000 };
const isTicket = (r: Ticket | Limited): r is Ticket => !('limited' in r);
function ticket(r: Ticket | Limited): Ticket {
  if (!isTicket(r)) throw new Error(`limited: ${r.limited}`);
  return r;
}

describe('SignInLimiter', () => {
  test('attempts in flight count: a burst from one address reserves at most perAddress, before any is tried', () => {
    const limiter = new SignInLimiter(LIMITS, () => 0);
    const burst = Array.from({ length: 60 }, () => limiter.reserve('10.0.0.1', 'staff'));
    expect(burst.filter(isTicket)).toHaveLength(3);
    expect(burst.filter((r) => !isTicket(r)).map((r) => (r as Limited).limited)).toEqual(Array(57).fill('address'));
  });

  test('a success gives its reservation back; failures stay for the window, then leave', () => {
    let now = 0;
    const limiter = new SignInLimiter(LIMITS, () => now);
    ticket(limiter.reserve('10.0.0.1', 'staff')).succeeded();
    for (let i = 0; i < 3; i++) ticket(limiter.reserve('10.0.0.1', `r${i}`)).failed();
    const refused = limiter.reserve('10.0.0.1', 'staff') as Limited;
    expect(refused).toEqual({ limited: 'address', retryAfterMs: 60_000 });
    now = 60_000;
    expect(isTicket(limiter.reserve('10.0.0.1', 'staff'))).toBe(true);
  });

  test('an attacked role is slowed for the addresses that failed on it, never locked for one that has not', () => {
    let now = 0;
    const limiter = new SignInLimiter(LIMITS, () => now);
    // four attacker addresses fail once each on staff: the role is attacked
    for (const a of ['10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5']) ticket(limiter.reserve(a, 'staff')).failed();
    // an address that never failed still gets its attempt at once
    expect(isTicket(limiter.reserve('10.0.0.9', 'staff'))).toBe(true);
    // an attacker waits backoffAfter(1) after its failure
    expect(limiter.reserve('10.0.0.2', 'staff')).toEqual({ limited: 'role', retryAfterMs: 1_000 });
    now = 1_000;
    const second = ticket(limiter.reserve('10.0.0.2', 'staff'));
    // one at a time per address on an attacked role
    expect((limiter.reserve('10.0.0.2', 'staff') as Limited).limited).toBe('role');
    second.failed();
    now = 2_999;
    expect((limiter.reserve('10.0.0.2', 'staff') as Limited).limited).toBe('role');
    now = 3_000;
    expect(isTicket(limiter.reserve('10.0.0.2', 'staff'))).toBe(true);
    // another role from the same addresses is not slowed by staff's attack
    expect(isTicket(limiter.reserve('10.0.0.3', 'other'))).toBe(true);
  });

  test('a ticket counts once, whichever it reports', () => {
    const limiter = new SignInLimiter({ ...LIMITS, perAddress: 1 }, () => 0);
    const t = ticket(limiter.reserve('a', 'r'));
    t.succeeded();
    t.failed();
    expect(isTicket(limiter.reserve('a', 'r'))).toBe(true);
  });

  test('keeps at most maxKeys addresses, dropping the oldest', () => {
    const limiter = new SignInLimiter({ ...LIMITS, perAddress: 1 }, () => 0, 2);
    for (const a of ['a', 'b', 'c']) ticket(limiter.reserve(a, 'r')).failed();
    expect(isTicket(limiter.reserve('a', 'r'))).toBe(true);
    expect(isTicket(limiter.reserve('c', 'r'))).toBe(false);
  });

  test.each([
    [0, 0],
    [1, 1_000],
    [2, 2_000],
    [4, 8_000],
    [40, 8_000],
  ])('backoffAfter(%d failures) = %d ms', (failures, ms) => {
    expect(backoffAfter(failures, LIMITS)).toBe(ms);
  });

  test('the documented defaults: 10 per address per 15 min, attacked at 10, backoff 1 s to 5 min', () => {
    expect(SIGN_IN_LIMITS).toEqual({ perAddress: 10, windowMs: 900_000, attackedRole: 10, backoffMs: 1_000, backoffMaxMs: 300_000 });
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

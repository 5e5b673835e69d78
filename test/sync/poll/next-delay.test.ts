import { describe, expect, it } from 'vitest';
import { defaultDelayPolicy, nextDelay, type DelayPolicy, type DelayReason } from '../../../src/sync/poll/next-delay.js';

const policy: DelayPolicy = {
  pollIntervalMs: 1_000,
  pollJitterRatio: 0.1,
  failureBaseMs: 500,
  failureCapMs: 8_000,
  failureFloorMs: 100,
  noProgressCapMs: 5_000,
};

describe('nextDelay', () => {
  const cases: Array<{ name: string; reason: DelayReason; random: number; expected: number }> = [
    { name: 'caught up, no jitter: the full interval', reason: { kind: 'caught-up' }, random: 0, expected: 1_000 },
    { name: 'caught up, middle jitter', reason: { kind: 'caught-up' }, random: 0.5, expected: 950 },
    { name: 'caught up, most jitter: never past the interval', reason: { kind: 'caught-up' }, random: 1, expected: 900 },
    { name: 'first failure: up to base', reason: { kind: 'failure', consecutiveFailures: 1 }, random: 0.5, expected: 250 },
    { name: 'third failure: up to 4x base', reason: { kind: 'failure', consecutiveFailures: 3 }, random: 0.5, expected: 1_000 },
    { name: 'many failures: capped', reason: { kind: 'failure', consecutiveFailures: 30 }, random: 0.5, expected: 4_000 },
    { name: 'failure with zero jitter: floor', reason: { kind: 'failure', consecutiveFailures: 5 }, random: 0, expected: 100 },
    // a 429 the client stopped retrying: its Retry-After holds over a shorter backoff, never a longer one
    {
      name: 'failure with Retry-After: never sooner',
      reason: { kind: 'failure', consecutiveFailures: 1, retryAfterMs: 1_000 },
      random: 0.5,
      expected: 1_000,
    },
    {
      name: 'failure with a shorter Retry-After: the backoff',
      reason: { kind: 'failure', consecutiveFailures: 30, retryAfterMs: 1_000 },
      random: 0.5,
      expected: 4_000,
    },
    { name: 'no progress once: the poll interval', reason: { kind: 'no-progress', streak: 1 }, random: 0, expected: 1_000 },
    { name: 'no progress 3 times: doubled twice', reason: { kind: 'no-progress', streak: 3 }, random: 0, expected: 4_000 },
    { name: 'no progress forever: capped', reason: { kind: 'no-progress', streak: 20 }, random: 0.5, expected: 5_000 },
    { name: 'first conflict: reload at once', reason: { kind: 'conflict', streak: 1 }, random: 0.5, expected: 0 },
    { name: 'second conflict in a row: backs off', reason: { kind: 'conflict', streak: 2 }, random: 0.5, expected: 250 },
  ];
  it.each(cases)('$name → $expected ms', ({ reason, random, expected }) => {
    expect(nextDelay(reason, policy, () => random)).toBe(expected);
  });

  it('failure backoff never exceeds its cap and never falls under its floor', () => {
    for (let failures = 1; failures < 40; failures += 1) {
      for (const random of [0, 0.3, 0.999]) {
        const delay = nextDelay({ kind: 'failure', consecutiveFailures: failures }, policy, () => random);
        expect(delay).toBeGreaterThanOrEqual(policy.failureFloorMs);
        expect(delay).toBeLessThanOrEqual(policy.failureCapMs);
      }
    }
  });

  it('the default policy derives its no-progress cap from the poll interval', () => {
    expect(defaultDelayPolicy(5_000).noProgressCapMs).toBe(300_000);
    expect(defaultDelayPolicy(600_000).noProgressCapMs).toBe(600_000);
    expect(defaultDelayPolicy(5_000, 30_000).failureCapMs).toBe(30_000);
  });
});

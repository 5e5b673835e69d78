import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { HostRequestBudget, nextAccount, refill } from '../../src/intake/request-budget.js';

describe('refill', () => {
  test.each([
    ['half a second at 10/s', 0, 500, 10, 5],
    ['never past one second of burst', 3, 10_000, 10, 10],
    ['a rate under 1/s still holds one request', 0, 10_000, 0.5, 1],
    ['a clock that went back adds nothing', 2, -100, 10, 2],
  ])('%s', (_label, tokens, elapsed, rate, expected) => {
    expect(refill(tokens, elapsed, rate)).toBe(expected);
  });
});

describe('nextAccount', () => {
  test.each([
    ['nobody waits', [], ['a', 'b'], 'a', undefined],
    ['round robin after the last served', ['a', 'b', 'c'], ['a', 'b', 'c'], 'a', 'b'],
    ['wraps around', ['a', 'b', 'c'], ['a', 'b', 'c'], 'c', 'a'],
    ['skips accounts with nothing waiting', ['a', 'c'], ['a', 'b', 'c'], 'a', 'c'],
    ['a backlogged account alone is served', ['a'], ['a', 'b'], 'a', 'a'],
    ['first call', ['b'], ['a', 'b'], undefined, 'b'],
  ])('%s', (_label, waiting, order, last, expected) => {
    expect(nextAccount(waiting, order, last)).toBe(expected);
  });
});

describe('HostRequestBudget', () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());

  test('a backlogged account and a quiet one share the rate fairly; the rate holds', async () => {
    const budget = new HostRequestBudget(10, { now: () => Date.now() });
    const busy = budget.forAccount('busy');
    const quiet = budget.forAccount('quiet');
    const served: Array<[string, number]> = [];
    const ask = (name: string, account: { acquire(): Promise<void> }) => account.acquire().then(() => served.push([name, Date.now()]));
    // the first second's burst goes to whoever asks; then 40 requests of busy wait, and quiet asks twice
    const burst = Array.from({ length: 10 }, () => ask('busy', busy));
    await Promise.all(burst);
    const backlog = Array.from({ length: 40 }, () => ask('busy', busy));
    const quietOnes = [ask('quiet', quiet), ask('quiet', quiet)];
    await vi.advanceTimersByTimeAsync(400);
    // within 0.4 s, 4 tokens: alternating, so both of quiet's requests went out already
    expect(served.slice(10).map(([name]) => name)).toEqual(['quiet', 'busy', 'quiet', 'busy']);
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all([...backlog, ...quietOnes]);
    // never more than 10 in any 1-second window after the burst
    const times = served.slice(10).map(([, at]) => at);
    for (const t of times) expect(times.filter((u) => u >= t && u < t + 1_000).length).toBeLessThanOrEqual(10);
    expect(served).toHaveLength(52);
  });

  test('an aborted wait leaves the queue and rejects with the reason', async () => {
    const budget = new HostRequestBudget(1, { now: () => Date.now() });
    const account = budget.forAccount('a');
    await account.acquire();
    const stop = new AbortController();
    const waiting = account.acquire(stop.signal);
    expect(budget.waiting()).toBe(1);
    stop.abort(new Error('stopping'));
    await expect(waiting).rejects.toThrow('stopping');
    expect(budget.waiting()).toBe(0);
  });
});

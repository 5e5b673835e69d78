import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { CATCH_UP_MS, grantWait, HostRequestBudget, nextAccount, slotAfterGrant } from '../../src/intake/request-budget.js';

describe('grantWait', () => {
  test.each([
    ['slot reached, fewer than rate granted', 1_000, 1_000, undefined, 0],
    ['before the slot: wait for it', 1_000, 1_004, undefined, 4],
    ['slot reached, the rate-th last grant still in the window', 1_000, 990, 400, 400],
    ['the rate-th last grant just left the window', 1_400, 990, 400, 0],
    ['both: the later one counts', 1_000, 1_250, 100, 250],
  ])('%s', (_label, now, slot, oldest, expected) => {
    expect(grantWait(now, slot, oldest)).toBe(expected);
  });
});

describe('slotAfterGrant', () => {
  test.each([
    ['on schedule: one spacing on', 1_000, 1_000, 4, 1_004],
    ['a late timer: the missed slots are owed, up to CATCH_UP_MS', 1_050, 1_000, 4, 1_004],
    ['after a quiet spell: no more than CATCH_UP_MS owed', 60_000, 1_000, 4, 60_000 - CATCH_UP_MS + 4],
  ])('%s', (_label, now, slot, spacing, expected) => {
    expect(slotAfterGrant(now, slot, spacing)).toBe(expected);
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

/** The most of `times` (ms) in any window [t, t + 1000). */
function worstSecond(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let worst = 0;
  for (let start = 0, end = 0; start < sorted.length; start++) {
    while (end < sorted.length && (sorted[end] as number) < (sorted[start] as number) + 1_000) end++;
    worst = Math.max(worst, end - start);
  }
  return worst;
}

describe('HostRequestBudget', () => {
  beforeEach(() => vi.useFakeTimers({ now: 0 }));
  afterEach(() => vi.useRealTimers());

  test('a backlogged account and a quiet one alternate; requests go out one spacing apart', async () => {
    const budget = new HostRequestBudget(10, { now: () => Date.now() });
    const busy = budget.forAccount('busy');
    const quiet = budget.forAccount('quiet');
    const served: Array<[string, number]> = [];
    const ask = (name: string, account: { acquire(): Promise<void> }) => account.acquire().then(() => served.push([name, Date.now()]));
    const backlog = Array.from({ length: 20 }, () => ask('busy', busy));
    const quietOnes = [ask('quiet', quiet), ask('quiet', quiet)];
    await vi.advanceTimersByTimeAsync(3_000);
    await Promise.all([...backlog, ...quietOnes]);
    expect(served.slice(0, 5)).toEqual([
      ['busy', 0],
      ['quiet', 100],
      ['busy', 200],
      ['quiet', 300],
      ['busy', 400],
    ]);
    expect(served).toHaveLength(22);
    expect(served.at(-1)).toEqual(['busy', 2_100]);
  });

  // the cap an operator counts: however the requests arrive (bursts, quiet spells, many accounts, a
  // late timer), no window of one second holds more than the rate; and a saturated budget uses it
  test.each([
    ['rate 10, bursts of 30', 10, 30],
    ['rate 250, 500 feeds polling in step', 250, 500],
    ['rate 3 (a spacing of 333.3 ms)', 3, 12],
  ])('never more than the rate in any second: %s', async (_label, rate, burst) => {
    const budget = new HostRequestBudget(rate, { now: () => Date.now() });
    const accounts = Array.from({ length: Math.min(burst, 50) }, (_, i) => budget.forAccount(`feed-${i}`));
    const times: number[] = [];
    const pending: Array<Promise<unknown>> = [];
    const askBurst = () => {
      for (let i = 0; i < burst; i++)
        pending.push((accounts[i % accounts.length] as (typeof accounts)[0]).acquire().then(() => times.push(Date.now())));
    };
    // a burst, a quiet spell longer than the window, then bursts landing while the budget is saturated
    askBurst();
    await vi.advanceTimersByTimeAsync(Math.ceil((burst / rate) * 1_000) + 2_500);
    askBurst();
    await vi.advanceTimersByTimeAsync(700);
    askBurst();
    // a timer that fires late: the clock jumps without the timers running in between
    vi.setSystemTime(Date.now() + 450);
    await vi.advanceTimersByTimeAsync(Math.ceil(((3 * burst) / rate) * 1_000) + 2_000);
    await Promise.all(pending);
    expect(times).toHaveLength(3 * burst);
    expect(worstSecond(times)).toBe(rate);
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

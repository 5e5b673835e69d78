import { describe, expect, it } from 'vitest';
import { LeaseCalls, type LeaseRound, type LeaseRoundResult, nextRound } from '../../../src/sync/leadership/lease-batch.js';

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: Error): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** A LeaseCalls whose gathering and rounds the test ends by hand. */
function scripted() {
  const rounds: { round: LeaseRound; answer: Deferred<LeaseRoundResult> }[] = [];
  const gathers: Deferred<void>[] = [];
  let roundStarted = deferred<void>();
  const calls = new LeaseCalls({
    maxFeedsPerKind: 1_000,
    gather: () => {
      const gather = deferred<void>();
      gathers.push(gather);
      return gather.promise;
    },
    run: (round) => {
      const answer = deferred<LeaseRoundResult>();
      rounds.push({ round, answer });
      roundStarted.resolve();
      return answer.promise;
    },
  });
  return {
    calls,
    rounds,
    gathers,
    /** resolves once the next round has been handed to run() */
    nextRoundStarted: () => {
      const started = roundStarted.promise;
      return started.then(() => {
        roundStarted = deferred<void>();
      });
    },
  };
}

const result = (held: string[], taken: string[] | Error): LeaseRoundResult => ({
  held: new Set(held),
  taken: taken instanceof Error ? taken : new Set(taken),
});

describe('lease calls coalesced into rounds', () => {
  it('answers the calls that arrive together, whatever their number, with one round', async () => {
    const { calls, rounds, gathers, nextRoundStarted } = scripted();
    const feeds = Array.from({ length: 200 }, (_, i) => `feed-${i}`);
    const started = nextRoundStarted();
    const checks = feeds.slice(0, 100).map((feed) => calls.stillHeld(feed));
    const takes = feeds.slice(100).map((feed) => calls.tryAcquire(feed));
    expect(gathers).toHaveLength(1);
    gathers[0]?.resolve();
    await started;
    expect(rounds).toHaveLength(1);
    expect(rounds[0]?.round).toEqual({ releases: [], checks: feeds.slice(0, 100), takes: feeds.slice(100) });
    rounds[0]?.answer.resolve(result(feeds.slice(0, 99), feeds.slice(100, 150)));
    expect(await Promise.all(checks)).toEqual(feeds.slice(0, 100).map((_, i) => i < 99));
    expect(await Promise.all(takes)).toEqual(feeds.slice(100).map((_, i) => i < 50));
  });

  it('calls that arrive while a round is in flight are answered together by the next round, without a new wait', async () => {
    const { calls, rounds, gathers, nextRoundStarted } = scripted();
    let started = nextRoundStarted();
    const first = calls.stillHeld('a');
    gathers[0]?.resolve();
    await started;
    started = nextRoundStarted();
    const later = [calls.stillHeld('b'), calls.tryAcquire('c'), calls.release('d')];
    rounds[0]?.answer.resolve(result(['a'], []));
    expect(await first).toBe(true);
    await started;
    expect(gathers).toHaveLength(1);
    expect(rounds[1]?.round).toEqual({ releases: ['d'], checks: ['b'], takes: ['c'] });
    rounds[1]?.answer.resolve(result([], ['c']));
    expect(await Promise.all(later)).toEqual([false, true, undefined]);
  });

  it('a failed round: takes reject, checks report the lease lost, releases resolve', async () => {
    const { calls, rounds, gathers, nextRoundStarted } = scripted();
    const started = nextRoundStarted();
    const take = calls.tryAcquire('a');
    const check = calls.stillHeld('b');
    const release = calls.release('c');
    gathers[0]?.resolve();
    await started;
    rounds[0]?.answer.reject(new Error('connection refused'));
    await expect(take).rejects.toThrow('connection refused');
    expect(await check).toBe(false);
    expect(await release).toBeUndefined();
  });

  it('a take that could not reach the database rejects, while a checked lease in the same round is still held', async () => {
    const { calls, rounds, gathers, nextRoundStarted } = scripted();
    const started = nextRoundStarted();
    const take = calls.tryAcquire('a');
    const check = calls.stillHeld('b');
    gathers[0]?.resolve();
    await started;
    rounds[0]?.answer.resolve(result(['b'], new Error('the lock session was replaced by a reconnect')));
    await expect(take).rejects.toThrow('replaced by a reconnect');
    expect(await check).toBe(true);
  });
});

describe('nextRound (a feed keeps the order of its calls)', () => {
  const call = (kind: keyof LeaseRound, feed: string) => ({ kind, feed });

  it('merges the same kind of call for a feed and leaves a call of another kind, and all after it, for the next round', () => {
    const queue = [
      call('takes', 'a'),
      call('checks', 'b'),
      call('takes', 'a'),
      call('releases', 'a'),
      call('takes', 'a'),
      call('releases', 'c'),
    ];
    const { round, calls, rest } = nextRound(queue, 100);
    expect(round).toEqual({ releases: ['c'], checks: ['b'], takes: ['a'] });
    expect(calls).toEqual([queue[0], queue[1], queue[2], queue[5]]);
    expect(rest).toEqual([queue[3], queue[4]]);
    expect(nextRound(rest, 100).round).toEqual({ releases: ['a'], checks: [], takes: [] });
  });

  it('names at most maxFeedsPerKind feeds of each kind: the others, and their later calls, wait for the next round', () => {
    const queue = [
      call('checks', 'a'),
      call('checks', 'b'),
      call('checks', 'c'),
      call('takes', 'd'),
      call('checks', 'a'),
      call('checks', 'c'),
    ];
    const { round, calls, rest } = nextRound(queue, 2);
    expect(round).toEqual({ releases: [], checks: ['a', 'b'], takes: ['d'] });
    expect(calls).toEqual([queue[0], queue[1], queue[3], queue[4]]);
    expect(rest).toEqual([queue[2], queue[5]]);
  });

  it('an empty queue is an empty round', () => {
    expect(nextRound([], 100)).toEqual({ round: { releases: [], checks: [], takes: [] }, calls: [], rest: [] });
  });
});

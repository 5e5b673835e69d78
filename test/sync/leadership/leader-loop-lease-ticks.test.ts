import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sleepUnlessAborted } from '../../../src/lib/loop-sleep.js';
import { SyncWorker } from '../../../src/sync/leadership/leader-loop.js';
import { LeaseCalls, type LeaseRound } from '../../../src/sync/leadership/lease-batch.js';
import { untilLeaseCheck } from '../../../src/sync/leadership/lease-check-tick.js';
import type { FeedLease } from '../../../src/sync/leadership/lease.js';
import type { PollLoop } from '../../../src/sync/poll/poller.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';

const silent = pino({ level: 'silent' });
const RETRY_MS = 2_000;
const GATHER_MS = 20;

/** A poller that polls until stopped. */
function idlePoller(): PollLoop {
  let end: () => void = () => {};
  const ended = new Promise<void>((resolve) => (end = resolve));
  return {
    run: () => ended,
    drain: async () => ({ drained: true, elapsedMs: 0, eventsPerSecond: 0 }) as never,
    stop: async () => end(),
  };
}

/**
 * One process's lock session as the workers see it: their calls coalesced by LeaseCalls (20 ms
 * gather on the fake clock), each round recorded; `held` feeds are this replica's, every other feed
 * is held elsewhere (its take fails). With `ticks`, the leases offer the session's common tick.
 */
function session(held: ReadonlySet<string>, ticks: boolean) {
  const rounds: { at: number; round: LeaseRound }[] = [];
  const calls = new LeaseCalls({
    maxFeedsPerKind: 10_000,
    gather: () => new Promise<void>((resolve) => setTimeout(resolve, GATHER_MS)),
    run: async (round) => {
      rounds.push({ at: Date.now(), round });
      const taken = new Set(round.takes.filter((feed) => held.has(feed)));
      return { held: new Set(round.checks.filter((feed) => held.has(feed))), taken };
    },
  });
  const lease = (feed: string): FeedLease => ({
    tryAcquire: () => calls.tryAcquire(feed),
    stillHeld: () => calls.stillHeld(feed),
    release: () => calls.release(feed),
    ...(ticks ? { untilNextCheck: (everyMs: number) => untilLeaseCheck(Date.now(), everyMs, 700) } : {}),
  });
  return { rounds, lease };
}

/** Workers of `feeds`, started one at a time `spreadMs` apart (as after a rebalance: feeds given up at scattered moments). */
async function startScattered(lease: (feed: string) => FeedLease, feeds: string[], spreadMs: number) {
  const workers: SyncWorker[] = [];
  const running: Promise<void>[] = [];
  for (const feed of feeds) {
    const worker = new SyncWorker({
      lease: lease(feed),
      createPoller: idlePoller,
      state: new WorkerState({ now: () => Date.now() }),
      sleep: sleepUnlessAborted,
      leaseRetryMs: RETRY_MS,
      log: silent,
    });
    workers.push(worker);
    running.push(worker.run());
    await vi.advanceTimersByTimeAsync(spreadMs);
  }
  return {
    stop: async () => {
      // the leaders' releases go through the 20 ms gather on the fake clock
      const stopped = Promise.all([...workers.map((worker) => worker.stop()), ...running]);
      await vi.advanceTimersByTimeAsync(10 * GATHER_MS);
      await stopped;
    },
  };
}

const feeds = Array.from({ length: 20 }, (_, i) => `feed_${i}`);
// this replica leads the first 5; the other 15 are standbys, whose takes fail
const held = new Set(feeds.slice(0, 5));

describe('SyncWorker waits for its lock session common lease check', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    vi.setSystemTime(0);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('standbys and leaders that started at scattered moments share one round per interval from the first tick on', async () => {
    const { rounds, lease } = session(held, true);
    // 20 workers 97 ms apart: their first calls spread over 1.9 s, beyond any gather window
    const fleet = await startScattered(lease, feeds, 97);
    const settled = Date.now() + RETRY_MS;
    await vi.advanceTimersByTimeAsync(5 * RETRY_MS);
    const later = rounds.filter((r) => r.at >= settled && r.at < settled + 4 * RETRY_MS);
    // one round per tick (phase 700 of every 2000 ms), each with every feed: the leaders' checks and the standbys' takes
    expect(later).toHaveLength(4);
    for (const { at, round } of later) {
      expect(at % RETRY_MS).toBe((700 + GATHER_MS) % RETRY_MS);
      expect(new Set([...round.checks, ...round.takes])).toEqual(new Set(feeds));
    }
    await fleet.stop();
  });

  it('without a common tick (a lease on a session of its own) each worker waits the full interval from its own call', async () => {
    const { rounds, lease } = session(held, false);
    const fleet = await startScattered(lease, feeds, 97);
    const settled = Date.now() + RETRY_MS;
    await vi.advanceTimersByTimeAsync(4 * RETRY_MS);
    const perInterval = rounds.filter((r) => r.at >= settled && r.at < settled + RETRY_MS).length;
    // the calls stay as scattered as they started: a round for nearly each of them
    expect(perInterval).toBeGreaterThan(10);
    await fleet.stop();
  });

  it('no wait is longer than the interval: a standby that failed just after a tick retries at the next one', async () => {
    const { rounds, lease } = session(new Set(), true);
    vi.setSystemTime(700 + 1);
    const fleet = await startScattered(lease, ['feed_a'], 0);
    await vi.advanceTimersByTimeAsync(RETRY_MS + GATHER_MS);
    const takes = rounds.filter((r) => r.round.takes.includes('feed_a')).map((r) => r.at);
    expect(takes).toEqual([701 + GATHER_MS, RETRY_MS + 700 + GATHER_MS]);
    await fleet.stop();
  });
});

import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { LoopSleep } from '../../../src/lib/loop-sleep.js';
import { SyncWorker } from '../../../src/sync/leadership/leader-loop.js';
import type { FeedLease } from '../../../src/sync/leadership/lease.js';
import type { PollLoop } from '../../../src/sync/poll/poller.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';
import { waitFor } from '../../support/wait-for.js';

const silent = pino({ level: 'silent' });

/** Sleeps that end only when the test says so (or on abort): each lease check is one tick. */
function manualSleep() {
  const waiting: Array<() => void> = [];
  const sleep: LoopSleep = (_ms, signal) =>
    new Promise<void>((resolve) => {
      waiting.push(resolve);
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  return {
    sleep,
    pending: () => waiting.length,
    tick: () => {
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

/** A poller that polls until stopped, counting its terms. */
function countingPollers() {
  let created = 0;
  let running = 0;
  const create = (): PollLoop => {
    created += 1;
    let end: () => void = () => {};
    const ended = new Promise<void>((resolve) => (end = resolve));
    return {
      run: async () => {
        running += 1;
        await ended;
        running -= 1;
      },
      drain: async () => ({ drained: true, elapsedMs: 0, eventsPerSecond: 0 }) as never,
      stop: async () => end(),
    };
  };
  return { create, created: () => created, running: () => running };
}

function setup(initialPause: { reason: string } | null) {
  let pause = initialPause;
  const lease: FeedLease & { releases: number } = {
    releases: 0,
    tryAcquire: async () => true,
    stillHeld: async () => true,
    async release() {
      this.releases += 1;
    },
  };
  const sleep = manualSleep();
  const pollers = countingPollers();
  const state = new WorkerState({ now: () => Date.now() });
  const worker = new SyncWorker({
    lease,
    createPoller: pollers.create,
    state,
    sleep: sleep.sleep,
    leaseRetryMs: 1_000,
    log: silent,
    pauseOf: async () => pause,
  });
  return { worker, lease, sleep, pollers, state, setPause: (p: { reason: string } | null) => (pause = p) };
}

describe('SyncWorker honours a pause (feeds pause)', () => {
  it('a feed paused from the start holds its lease as standby and polls nothing until resumed', async () => {
    const { worker, sleep, pollers, state, setPause, lease } = setup({ reason: 'clinic_leaving' });
    const running = worker.run();
    await waitFor(() => sleep.pending() === 1, { timeoutMs: 5_000, what: 'the paused hold to wait for its lease check' });
    expect(state.snapshot().role).toBe('standby');
    // lease checks go by, still paused: no poller, the lease kept
    sleep.tick();
    await waitFor(() => sleep.pending() === 1, { timeoutMs: 5_000, what: 'the next lease check' });
    expect(pollers.created()).toBe(0);
    expect(lease.releases).toBe(0);

    setPause(null);
    sleep.tick();
    await waitFor(() => pollers.running() === 1, { timeoutMs: 5_000, what: 'polling after the resume' });
    expect(state.snapshot().role).toBe('leader');
    await worker.stop();
    await running;
  });

  it('a leader paused mid-term stops polling at its next lease check and holds the lease paused', async () => {
    const { worker, sleep, pollers, state, setPause } = setup(null);
    const running = worker.run();
    await waitFor(() => pollers.running() === 1 && sleep.pending() === 1, { timeoutMs: 5_000, what: 'a term as leader' });

    setPause({ reason: 'operator_review' });
    // no lease check yet: still polling
    expect(pollers.running()).toBe(1);
    sleep.tick();
    await waitFor(() => pollers.running() === 0 && state.snapshot().role === 'standby', {
      timeoutMs: 5_000,
      what: 'the poller stopped at the lease check',
    });
    await waitFor(() => sleep.pending() === 1, { timeoutMs: 5_000, what: 'the paused hold' });
    expect(pollers.created()).toBe(1);

    setPause(null);
    sleep.tick();
    await waitFor(() => pollers.running() === 1, { timeoutMs: 5_000, what: 'a new term after the resume' });
    expect(pollers.created()).toBe(2);
    await worker.stop();
    await running;
  });

  it('run --once drains nothing of a paused feed, and gives the lease back', async () => {
    const { worker, pollers, lease } = setup({ reason: 'clinic_leaving' });
    expect(await worker.drain()).toBeUndefined();
    expect(pollers.created()).toBe(0);
    expect(lease.releases).toBe(1);
  });
});

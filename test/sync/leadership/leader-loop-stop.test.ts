import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { FeedLease } from '../../../src/sync/leadership/lease.js';
import { Poller } from '../../../src/sync/poll/poller.js';
import { sleepUnlessAborted } from '../../../src/lib/loop-sleep.js';
import { SyncWorker } from '../../../src/sync/leadership/leader-loop.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';
import { waitFor } from '../../support/wait-for.js';

const silent = pino({ level: 'silent' });

/** A lease that is always free (or always taken) and records its releases. */
function recordingLease(free = true): FeedLease & { releases: number } {
  return {
    releases: 0,
    tryAcquire: async () => free,
    stillHeld: async () => true,
    async release() {
      this.releases += 1;
    },
  };
}

function worker(applyPage: () => Promise<never>, lease: FeedLease, stopWaitMs: number) {
  const state = new WorkerState({ now: () => Date.now() });
  let applying = false;
  const syncWorker = new SyncWorker({
    lease,
    createPoller: () =>
      new Poller({
        fetchPage: async () => ({ events: [{ id: 'evt_1' }], meta: { iterator: 'next', done: false } }),
        applyPage: () => {
          applying = true;
          return applyPage();
        },
        loadCheckpoint: async () => ({ iterator: null, version: 0, updatedAt: 0 }),
        clock: { now: () => Date.now() },
        sleep: sleepUnlessAborted,
        nextDelay: () => 10,
        state,
        log: silent,
      }),
    state,
    sleep: sleepUnlessAborted,
    leaseRetryMs: 60_000,
    stopWaitMs,
    log: silent,
  });
  return { syncWorker, state, applying: () => applying };
}

describe('SyncWorker.stop', () => {
  it('waits for the page in flight to settle, then releases the lease once', async () => {
    const lease = recordingLease();
    let settle: (() => void) | undefined;
    const { syncWorker, applying } = worker(
      () => new Promise((_, reject) => (settle = () => reject(new Error('rolled back')))),
      lease,
      5_000,
    );
    const running = syncWorker.run();
    await waitFor(async () => applying(), { timeoutMs: 20_000, what: 'a page in flight' });
    let stopped = false;
    const stopping = syncWorker.stop().then(() => {
      stopped = true;
    });
    // a few turns of the event loop: stop() must still be waiting on the page, lease unreleased
    for (let turn = 0; turn < 10; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false);
    expect(lease.releases).toBe(0);
    settle?.();
    await stopping;
    await running;
    expect(lease.releases).toBe(1);
  });

  it('gives up on a page that never settles after stopWaitMs and releases the lease itself', async () => {
    const lease = recordingLease();
    // a statement on a stranded connection: no answer, ever
    const { syncWorker, applying } = worker(() => new Promise<never>(() => {}), lease, 200);
    void syncWorker.run();
    await waitFor(async () => applying(), { timeoutMs: 20_000, what: 'a page in flight' });
    const started = Date.now();
    await syncWorker.stop();
    const took = Date.now() - started;
    // never earlier than stopWaitMs; that it gives up at all is the proof it does not wait for the
    // page (which never settles), so no upper bound that a loaded machine could overrun
    expect(took).toBeGreaterThanOrEqual(190);
    expect(lease.releases).toBe(1);
  });

  it('a standby that is stopped closes its lock session (its open socket would keep the process alive)', async () => {
    const lease = recordingLease(false);
    const { syncWorker, state } = worker(() => new Promise<never>(() => {}), lease, 200);
    const running = syncWorker.run();
    await waitFor(() => state.snapshot().role === 'standby', { timeoutMs: 20_000, what: 'standby' });
    await syncWorker.stop();
    await running;
    expect(lease.releases).toBe(1);
  });
});

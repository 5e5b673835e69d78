import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { CheckpointConflictError } from '../../../src/sync/apply/errors/checkpoint-conflict-error.js';
import { Poller, type FetchedPage } from '../../../src/sync/poll/poller.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';

const silent = pino({ level: 'silent' });

/**
 * One feed's checkpoint row, which "another worker" (the test) can move, and a poller whose page
 * applies are a compare-and-set on it. Each page brings one event and says done, so every pass is
 * load, fetch, apply, caught up, sleep. `confirm` answers PollerDeps.confirmLeadership and, when it
 * says false, stops the poller as the leader loop's term does (leader-term.ts).
 */
function harness(options: {
  confirm: (h: { poller: Poller }) => Promise<boolean>;
  /** runs at each caught-up sleep, with how many sleeps came before */
  onSleep: (n: number, h: { checkpoint: { iterator: string | null; version: number }; poller: Poller }) => void;
  /** before the n-th apply (from 0): lets "another worker" commit while this page is in flight */
  beforeApply?: (n: number, checkpoint: { iterator: string | null; version: number }) => void;
}) {
  const checkpoint = { iterator: 'p0' as string | null, version: 7 };
  let now = 1_000_000;
  const clock = { now: () => now };
  const state = new WorkerState(clock);
  const applied: number[] = [];
  const asked: number[] = [];
  const holder: { poller?: Poller } = {};
  let sleeps = 0;
  let applies = 0;
  let events = 0;
  const poller = new Poller({
    fetchPage: async ({ iterator }): Promise<FetchedPage> => {
      events += 1;
      return { events: [{ n: events }], meta: { iterator: `${iterator}+`, done: true } };
    },
    applyPage: async (input) => {
      options.beforeApply?.(applies++, checkpoint);
      if (input.expectedVersion !== checkpoint.version) throw new CheckpointConflictError('east', input.expectedVersion);
      checkpoint.version += 1;
      checkpoint.iterator = input.nextIterator;
      applied.push(checkpoint.version);
      return {
        version: checkpoint.version,
        received: 1,
        inserted: 1,
        duplicates: 0,
        statusChanges: 0,
        matched: 0,
        quarantined: { malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 0 },
      };
    },
    loadCheckpoint: async () => ({ ...checkpoint, updatedAt: now }),
    confirmLeadership: async () => {
      asked.push(checkpoint.version);
      return options.confirm({ poller: holder.poller as Poller });
    },
    clock,
    sleep: async () => {
      now += 1_000;
      options.onSleep(sleeps, { checkpoint, poller: holder.poller as Poller });
      // a loop the scenario did not stop ends here, and fails on what it wrote, rather than spinning
      if (++sleeps >= 10) void holder.poller?.stop();
    },
    nextDelay: () => 1_000,
    state,
    log: silent,
    feed: 'east',
    // every pass reads the checkpoint: the moment a zombie resumes after a freeze past the reload interval
    checkpointReloadMs: 0,
  });
  holder.poller = poller;
  return { poller, state, applied, asked, checkpoint };
}

/** what "another worker" does: commits pages of its own */
function otherWorkerCommits(checkpoint: { iterator: string | null; version: number }, pages: number): void {
  checkpoint.version += pages;
  checkpoint.iterator = `other-${checkpoint.version}`;
}

describe('Poller: a checkpoint moved by someone else is acted on only once the lease is confirmed', () => {
  it('its own commits never ask: the reload finds the version the loop last committed', async () => {
    const h = harness({
      confirm: async () => true,
      onSleep: (n, { poller }) => n === 3 && void poller.stop(),
    });
    await h.poller.run();
    expect(h.applied).toEqual([8, 9, 10, 11]);
    expect(h.asked).toEqual([]);
  });

  it('a zombie resumed after another worker took over asks, is told no, and writes and reports nothing more', async () => {
    const h = harness({
      // the lease is gone: the term stops the poller (not awaited: the poller is the caller)
      confirm: async ({ poller }) => {
        void poller.stop();
        return false;
      },
      onSleep: (n) => {
        // frozen here past the TTL; meanwhile the new leader committed five pages
        if (n === 1) otherWorkerCommits(h.checkpoint, 5);
      },
    });
    await h.poller.run();
    expect(h.applied).toEqual([8, 9]);
    expect(h.asked).toEqual([14]);
    expect(h.checkpoint.version).toBe(14);
    // it does not report the new leader's position as its own
    expect(h.state.snapshot().checkpoint?.version).toBe(9);
  });

  it('a page in flight when the other worker committed conflicts, and the reload after it asks before going on', async () => {
    const h = harness({
      confirm: async ({ poller }) => {
        void poller.stop();
        return false;
      },
      beforeApply: (n, checkpoint) => n === 1 && otherWorkerCommits(checkpoint, 3),
      onSleep: () => {},
    });
    await h.poller.run();
    expect(h.applied).toEqual([8]);
    expect(h.asked).toEqual([11]);
    expect(h.state.snapshot().totals.conflicts).toBe(1);
  });

  it('a leader that still holds the lease (a reset, a resync) asks once and goes on from the moved position', async () => {
    const h = harness({
      confirm: async () => true,
      onSleep: (n, { checkpoint, poller }) => {
        if (n === 0) otherWorkerCommits(checkpoint, 2);
        if (n === 2) void poller.stop();
      },
    });
    await h.poller.run();
    expect(h.asked).toEqual([10]);
    expect(h.applied).toEqual([8, 11, 12]);
  });

  it('a lease check that fails writes nothing: a database failure, and the next pass asks again', async () => {
    let calls = 0;
    const h = harness({
      confirm: async () => {
        calls += 1;
        if (calls === 1) throw new Error('connection refused');
        return true;
      },
      onSleep: (n, { checkpoint, poller }) => {
        if (n === 0) otherWorkerCommits(checkpoint, 1);
        if (n === 2) void poller.stop();
      },
    });
    const failures: number[] = [];
    h.state.subscribe({ pollFailed: () => failures.push(h.applied.length) });
    await h.poller.run();
    // after the failed check: no apply until a check said yes
    expect(h.asked).toEqual([9, 9]);
    expect(h.applied).toEqual([8, 10]);
    expect(failures).toEqual([1]);
  });
});

import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { BadRequestError } from '../../../src/intake/errors/bad-request-error.js';
import { DrainIncompleteError } from '../../../src/sync/poll/errors/drain-incomplete-error.js';
import type { DelayReason } from '../../../src/sync/poll/next-delay.js';
import { Poller, type FetchedPage, type PollerDeps } from '../../../src/sync/poll/poller.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';

const silent = pino({ level: 'silent' });
const expired = () =>
  new BadRequestError({ method: 'GET', path: '/events' }, 'iterator has expired: the events it points at are no longer retained');

/**
 * A feed whose first `refusals` requests at a non-null iterator are refused with `error`, and a
 * checkpoint row the test can move (as resync does). The sleep runs `onSleep` with the count.
 */
function harness(options: {
  error?: () => Error;
  refusals?: number;
  iterator?: string | null;
  updatedAt?: number;
  deps?: Partial<PollerDeps>;
  onSleep: (n: number, h: { checkpoint: { iterator: string | null; version: number; updatedAt: number }; poller: Poller }) => void;
}) {
  const requests: Array<string | null> = [];
  const checkpoint = { iterator: options.iterator === undefined ? 'p5' : options.iterator, version: 7, updatedAt: options.updatedAt ?? 0 };
  let refusals = options.refusals ?? Infinity;
  let now = 1_000_000;
  const clock = { now: () => now };
  const state = new WorkerState(clock);
  const delays: DelayReason[] = [];
  let loads = 0;
  const holder: { poller?: Poller } = {};
  const poller = new Poller({
    fetchPage: async ({ iterator }): Promise<FetchedPage> => {
      requests.push(iterator);
      if (iterator !== null && refusals > 0) {
        refusals -= 1;
        throw (options.error ?? expired)();
      }
      return { events: [], meta: { iterator: 'p9', done: true } };
    },
    applyPage: async (input) => {
      checkpoint.iterator = input.nextIterator;
      checkpoint.version += 1;
      checkpoint.updatedAt = now;
      return {
        version: checkpoint.version,
        received: 0,
        inserted: 0,
        duplicates: 0,
        statusChanges: 0,
        matched: 0,
        quarantined: { malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 0 },
      };
    },
    loadCheckpoint: async () => {
      loads += 1;
      return { ...checkpoint };
    },
    clock,
    sleep: async () => {
      now += 1_000;
      options.onSleep(delays.length, { checkpoint, poller: holder.poller as Poller });
    },
    nextDelay: (reason) => {
      delays.push(reason);
      return 1_000;
    },
    state,
    log: silent,
    feed: 'east',
    ...options.deps,
  });
  holder.poller = poller;
  return { poller, requests, state, delays, loads: () => loads, checkpoint };
}

describe('Poller on a refused cursor', () => {
  it('stops asking the operator after an expired-iterator 400, says so, and resumes once the checkpoint moves', async () => {
    const snapshots: Array<ReturnType<WorkerState['snapshot']>['cursorProblem']> = [];
    const h = harness({
      refusals: 1,
      onSleep: (n, { checkpoint, poller }) => {
        snapshots.push(h.state.snapshot().cursorProblem);
        if (n === 3) {
          // resync: the cursor restarts from the beginning (null) at a new version
          checkpoint.iterator = null;
          checkpoint.version += 1;
        }
        if (n === 5) void poller.stop();
      },
    });
    await h.poller.run();
    // one refused request, none while held (3 waits), then from the beginning and on
    expect(h.requests).toEqual(['p5', null, 'p9']);
    expect(snapshots.slice(0, 3)).toEqual([
      { feed: 'east', kind: 'expired', since: 1_000_000 },
      { feed: 'east', kind: 'expired', since: 1_000_000 },
      { feed: 'east', kind: 'expired', since: 1_000_000 },
    ]);
    expect(h.state.snapshot().cursorProblem).toBeNull();
    expect(h.state.snapshot().consecutiveFailures).toBe(0);
    expect(h.loads()).toBeGreaterThanOrEqual(5);
  });

  it('a refusal with another message is a stop too (refused), never retried as a transient failure', async () => {
    const h = harness({
      error: () => new BadRequestError({ method: 'GET', path: '/events' }, 'iterator is not valid for this feed'),
      onSleep: (n, { poller }) => n === 4 && void poller.stop(),
    });
    await h.poller.run();
    expect(h.requests).toEqual(['p5']);
    expect(h.state.snapshot()).toMatchObject({ cursorProblem: { kind: 'refused' }, consecutiveFailures: 0 });
  });

  it('a 400 without an operator {error} body stays an ordinary failure (backoff and retry)', async () => {
    const h = harness({
      error: () => new BadRequestError({ method: 'GET', path: '/events' }, undefined),
      onSleep: (n, { poller }) => n === 2 && void poller.stop(),
    });
    await h.poller.run();
    expect(h.requests).toEqual(['p5', 'p5']);
    expect(h.delays.map((d) => d.kind)).toEqual(['failure', 'failure']);
    expect(h.state.snapshot()).toMatchObject({ cursorProblem: null, consecutiveFailures: 2 });
  });

  it('drain mode (run --once) gives up at once, naming the feed and the fix', async () => {
    const h = harness({ onSleep: () => {} });
    await expect(h.poller.drain()).rejects.toThrow(DrainIncompleteError);
    await expect(harness({ onSleep: () => {} }).poller.drain()).rejects.toThrow(
      /feed east stopped consuming: .*intake-sync resync --feed east/,
    );
    expect(h.requests).toEqual(['p5']);
  });

  it('with FEED_RETENTION_MS, a checkpoint idle that long stops the feed before any request (an operator may jump silently)', async () => {
    const h = harness({
      refusals: 0,
      updatedAt: 1_000_000 - 3_600_000,
      deps: { retentionMs: 3_600_000 },
      onSleep: (n, { checkpoint, poller }) => {
        if (n === 1) expect(h.state.snapshot().cursorProblem).toMatchObject({ feed: 'east', kind: 'gap-suspected' });
        if (n === 2) {
          expect(h.requests).toEqual([]);
          // `checkpoint reset --to` the same iterator: acknowledged, read on
          checkpoint.version += 1;
          checkpoint.updatedAt = 1_000_000 + 2_000;
        }
        if (n === 3) void poller.stop();
      },
    });
    const seen: unknown[] = [];
    h.state.subscribe({ pageApplied: () => seen.push(h.state.snapshot().cursorProblem) });
    await h.poller.run();
    expect(h.requests).toEqual(['p5']);
    expect(seen).toEqual([null]);
  });

  it('a checkpoint idle less than the retention reads on', async () => {
    const h = harness({
      refusals: 0,
      updatedAt: 1_000_000 - 3_599_999,
      deps: { retentionMs: 3_600_000 },
      onSleep: (_n, { poller }) => void poller.stop(),
    });
    await h.poller.run();
    expect(h.requests).toEqual(['p5']);
    expect(h.state.snapshot().cursorProblem).toBeNull();
  });
});

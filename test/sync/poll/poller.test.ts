import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { UnauthorizedError } from '../../../src/intake/errors/unauthorized-error.js';
import { UpstreamError } from '../../../src/intake/errors/upstream-error.js';
import { CheckpointConflictError } from '../../../src/sync/apply/errors/checkpoint-conflict-error.js';
import type { DelayReason } from '../../../src/sync/poll/next-delay.js';
import { Poller, type AppliedPage, type FetchedPage, type PollerDeps } from '../../../src/sync/poll/poller.js';
import { sleepUnlessAborted } from '../../../src/lib/loop-sleep.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';

const silent = pino({ level: 'silent' });

/** An operator feed of `total` events served `pageSize` at a time; the iterator is the next position. */
class FakeFeed {
  requests: Array<string | null> = [];
  /** scripted answers for the next requests, in order; undefined = serve normally */
  script: Array<((iterator: string | null) => FetchedPage | Promise<FetchedPage>) | Error> = [];

  constructor(
    private readonly total: number,
    private readonly pageSize = 2,
  ) {}

  async fetch(iterator: string | null): Promise<FetchedPage> {
    this.requests.push(iterator);
    const scripted = this.script.shift();
    if (scripted instanceof Error) throw scripted;
    if (scripted) return scripted(iterator);
    const from = iterator === null ? 0 : Number(iterator);
    const to = Math.min(this.total, from + this.pageSize);
    const events = Array.from({ length: to - from }, (_, i) => ({ id: `ev_${from + i}` }));
    return { events, meta: { iterator: String(to), done: to >= this.total } };
  }
}

/** The checkpoint row and event history, with the compare-and-set applyPage does. */
class FakeStore {
  iterator: string | null = null;
  version = 0;
  history = new Set<string>();
  applies: Array<{ expectedVersion: number; nextIterator: string; ids: string[] }> = [];
  loads = 0;
  /** thrown by the next apply(s), after the compare-and-set passed */
  failNextApply: Error[] = [];
  /** runs inside the next apply, before the compare-and-set (e.g. a concurrent reset) */
  beforeNextApply: (() => void) | undefined;

  async load() {
    this.loads += 1;
    return { iterator: this.iterator, version: this.version, updatedAt: new Date(0) };
  }

  async apply(input: { expectedVersion: number; nextIterator: string; events: unknown[] }): Promise<AppliedPage> {
    this.beforeNextApply?.();
    this.beforeNextApply = undefined;
    const failure = this.failNextApply.shift();
    if (failure) throw failure;
    if (input.expectedVersion !== this.version) throw new CheckpointConflictError('default', input.expectedVersion);
    const ids = input.events.map((e) => (e as { id: string }).id);
    this.applies.push({ expectedVersion: input.expectedVersion, nextIterator: input.nextIterator, ids });
    const fresh = ids.filter((id) => !this.history.has(id));
    fresh.forEach((id) => this.history.add(id));
    this.iterator = input.nextIterator;
    this.version += 1;
    const quarantined = { malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 0 };
    return {
      version: this.version,
      received: ids.length,
      inserted: fresh.length,
      duplicates: ids.length - fresh.length,
      statusChanges: fresh.length,
      matched: fresh.length,
      quarantined,
    };
  }
}

/** A promise the test opens when it chooses: orders concurrent work without timers. */
class Gate {
  open!: () => void;
  readonly passed = new Promise<void>((resolve) => {
    this.open = resolve;
  });
  constructor(openAtOnce: boolean) {
    if (openAtOnce) this.open();
  }
}

/** A log whose entries can be awaited: `reached(entry)` settles once that entry has been pushed. */
class OrderedLog {
  readonly entries: string[] = [];
  private readonly waiters = new Map<string, () => void>();

  push(entry: string): void {
    this.entries.push(entry);
    this.waiters.get(entry)?.();
  }

  reached(entry: string): Promise<void> {
    if (this.entries.includes(entry)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.set(entry, resolve));
  }
}

interface Harness {
  poller: Poller;
  feed: FakeFeed;
  store: FakeStore;
  state: WorkerState;
  delays: DelayReason[];
}

/** A poller on fakes; the fake sleep records why it waits and stops the loop after `stopAfterSleeps`. */
function harness(options: { feed?: FakeFeed; stopAfterSleeps?: number; deps?: Partial<PollerDeps> } = {}): Harness {
  const feed = options.feed ?? new FakeFeed(5);
  const store = new FakeStore();
  let now = 0;
  const clock = { now: () => (now += 1) };
  const state = new WorkerState(clock);
  const delays: DelayReason[] = [];
  const holder: { poller?: Poller } = {};
  const poller = new Poller({
    fetchPage: ({ iterator }) => feed.fetch(iterator),
    applyPage: (input) => store.apply(input),
    loadCheckpoint: () => store.load(),
    clock,
    sleep: async () => {
      // not awaited: stop() awaits this very loop
      if (delays.length >= (options.stopAfterSleeps ?? 1)) void holder.poller?.stop();
    },
    nextDelay: (reason) => {
      delays.push(reason);
      return 1;
    },
    state,
    log: silent,
    ...options.deps,
  });
  holder.poller = poller;
  return { poller, feed, store, state, delays };
}

describe('Poller', () => {
  it('drains page after page without waiting while done is false, then reports a summary', async () => {
    const { poller, feed, store, delays } = harness({ feed: new FakeFeed(5) });
    const summary = await poller.drain();
    expect(feed.requests).toEqual([null, '2', '4']);
    expect(store.applies.map((a) => [a.expectedVersion, a.nextIterator])).toEqual([
      [0, '2'],
      [1, '4'],
      [2, '5'],
    ]);
    expect(delays).toEqual([]);
    expect(summary).toMatchObject({ drained: true, pages: 3, received: 5, inserted: 5, duplicates: 0, statusChanges: 5 });
    expect(store.loads).toBe(1);
  });

  it('waits the caught-up interval once done, then polls from the committed position', async () => {
    const { poller, feed, delays, state } = harness({ feed: new FakeFeed(3), stopAfterSleeps: 2 });
    await poller.run();
    expect(delays).toEqual([{ kind: 'caught-up' }, { kind: 'caught-up' }]);
    expect(feed.requests).toEqual([null, '2', '3']);
    expect(state.snapshot()).toMatchObject({ backlog: false, consecutiveFailures: 0 });
  });

  it('paces caught-up polls start to start: the time the last poll took comes off the interval', async () => {
    let now = 0;
    const slept: number[] = [];
    const holder: { poller?: Poller } = {};
    const store = new FakeStore();
    const feed = new FakeFeed(1);
    holder.poller = new Poller({
      fetchPage: async ({ iterator }) => {
        now += 300; // a poll whose request takes 300 ms, the empty one included
        return feed.fetch(iterator);
      },
      applyPage: (input) => store.apply(input),
      loadCheckpoint: () => store.load(),
      clock: { now: () => now },
      sleep: async (ms) => {
        slept.push(ms);
        now += ms;
        if (slept.length >= 2) void holder.poller?.stop();
      },
      nextDelay: () => 1_000,
      state: new WorkerState({ now: () => now }),
      log: silent,
    });
    await holder.poller.run();
    expect(slept).toEqual([700, 700]);
  });

  it('backs off a page that makes no progress (same iterator, nothing new, not done) and shows it in state', async () => {
    const feed = new FakeFeed(0);
    const stuck = () => ({ events: [], meta: { iterator: 'here', done: false } });
    feed.script = [() => ({ events: [], meta: { iterator: 'here', done: false } }), stuck, stuck, stuck];
    const { poller, delays, state } = harness({ feed, stopAfterSleeps: 3 });
    await poller.run();
    expect(delays).toEqual([
      { kind: 'no-progress', streak: 1 },
      { kind: 'no-progress', streak: 2 },
      { kind: 'no-progress', streak: 3 },
    ]);
    expect(state.snapshot()).toMatchObject({ noProgressStreak: 3, backlog: true });
  });

  it('counts consecutive failures for its backoff, resets them on success, and never moves the checkpoint on a failed page', async () => {
    const feed = new FakeFeed(2);
    const unavailable = () => new UpstreamError({ method: 'GET', path: '/events' }, 503, undefined);
    feed.script = [unavailable(), unavailable(), unavailable()];
    const { poller, store, delays, state } = harness({ feed, stopAfterSleeps: 5 });
    await poller.run();
    expect(delays.slice(0, 4)).toEqual([
      { kind: 'failure', consecutiveFailures: 1 },
      { kind: 'failure', consecutiveFailures: 2 },
      { kind: 'failure', consecutiveFailures: 3 },
      { kind: 'caught-up' },
    ]);
    // the poll after the drain found nothing new at its iterator: nothing applied, yet a success
    expect(store.applies).toHaveLength(1);
    expect(state.snapshot().consecutiveFailures).toBe(0);
  });

  it('an empty poll at its own iterator writes nothing: no apply, the version stays, and it still counts as a success', async () => {
    const { poller, feed, store, state, delays } = harness({ feed: new FakeFeed(2), stopAfterSleeps: 3 });
    await poller.run();
    expect(feed.requests).toEqual([null, '2', '2']);
    expect(store.applies.map((a) => a.nextIterator)).toEqual(['2']);
    expect(store.version).toBe(1);
    // every pass reads the checkpoint again: a reset made while caught up is picked up at the next poll
    expect(store.loads).toBe(3);
    expect(delays).toEqual([{ kind: 'caught-up' }, { kind: 'caught-up' }, { kind: 'caught-up' }]);
    expect(state.snapshot()).toMatchObject({
      lastSuccessAt: expect.any(Number),
      consecutiveFailures: 0,
      backlog: false,
      totals: { pages: 1 },
    });
  });

  it('a caught-up worker picks up a reset at its next poll, though empty polls write nothing', async () => {
    const { poller, feed, store } = harness({ feed: new FakeFeed(2), stopAfterSleeps: 3 });
    const load = store.load.bind(store);
    store.load = async () => {
      // an operator resets to the beginning while the worker waits between its second and third poll
      if (store.loads === 2) {
        store.iterator = null;
        store.version += 1;
      }
      return load();
    };
    await poller.run();
    expect(feed.requests).toEqual([null, '2', null]);
    expect(store.applies.map((a) => [a.expectedVersion, a.nextIterator])).toEqual([
      [0, '2'],
      [2, '2'],
    ]);
  });

  it('with checkpointReloadMs, caught-up polls reuse the position they know and read it again once it is that old', async () => {
    let now = 0;
    const feed = new FakeFeed(2);
    const store = new FakeStore();
    const holder: { poller?: Poller } = {};
    let sleeps = 0;
    holder.poller = new Poller({
      fetchPage: ({ iterator }) => feed.fetch(iterator),
      applyPage: (input) => store.apply(input),
      loadCheckpoint: () => store.load(),
      clock: { now: () => now },
      sleep: async (ms) => {
        now += ms;
        // an operator resets the checkpoint while the worker waits before its fourth poll
        if (++sleeps === 3) {
          store.iterator = null;
          store.version += 1;
        }
        if (sleeps >= 6) void holder.poller?.stop();
      },
      nextDelay: () => 1_000,
      checkpointReloadMs: 2_000,
      state: new WorkerState({ now: () => now }),
      log: silent,
    });
    await holder.poller.run();
    // polls at 0 (load), 1 s (its own commit at 0 proves the position), 2 s (load), 3 s (reused: the reset
    // is not seen yet, the poll finds nothing at the old iterator), 4 s (load: the reset, replayed), 5 s
    expect(store.loads).toBe(3);
    expect(feed.requests).toEqual([null, '2', '2', '2', null, '2']);
    expect(store.applies.map((a) => [a.expectedVersion, a.nextIterator])).toEqual([
      [0, '2'],
      [2, '2'],
    ]);
  });

  it('with FEED_RETENTION_MS, a caught-up worker stamps its quiet checkpoint, so the gap check never stops it', async () => {
    let now = 10_000_000;
    const feed = new FakeFeed(2);
    const store = new FakeStore();
    let updatedAt = now;
    const touches: number[] = [];
    const holder: { poller?: Poller } = {};
    let sleeps = 0;
    const state = new WorkerState({ now: () => now });
    const apply = store.apply.bind(store);
    holder.poller = new Poller({
      fetchPage: ({ iterator }) => feed.fetch(iterator),
      applyPage: async (input) => {
        updatedAt = now;
        return apply(input);
      },
      loadCheckpoint: async () => ({ ...(await store.load()), updatedAt: new Date(updatedAt) }),
      touchCheckpoint: async (expectedVersion) => {
        if (expectedVersion === store.version) updatedAt = now;
        touches.push(now);
      },
      clock: { now: () => now },
      sleep: async (ms) => {
        now += ms;
        if (++sleeps >= 200) void holder.poller?.stop();
      },
      nextDelay: () => 1_000,
      checkpointReloadMs: 2_000,
      retentionMs: 60_000,
      state,
      log: silent,
    });
    await holder.poller.run();
    // 200 s of empty polls against a 60 s retention: stamped every 3 s (a twentieth), never stopped
    expect(state.snapshot().cursorProblem).toBeNull();
    expect(touches.length).toBeGreaterThanOrEqual(60);
    expect(touches.length).toBeLessThanOrEqual(70);
    expect(store.applies).toHaveLength(1);
  });

  it('without FEED_RETENTION_MS an empty poll writes nothing at all', async () => {
    const touches: number[] = [];
    const { poller, store } = harness({
      feed: new FakeFeed(2),
      stopAfterSleeps: 5,
      deps: { touchCheckpoint: async (v) => void touches.push(v) },
    });
    await poller.run();
    expect(touches).toEqual([]);
    expect(store.applies).toHaveLength(1);
  });

  it('with checkpointReloadMs, a moved checkpoint found by a commit forces a read at once', async () => {
    const feed = new FakeFeed(4);
    const { poller, store } = harness({ feed, stopAfterSleeps: 100, deps: { checkpointReloadMs: 3_600_000 } });
    const apply = store.apply.bind(store);
    let applies = 0;
    store.apply = async (input) => {
      if (++applies === 2) store.version += 1; // another writer moved it
      return apply(input);
    };
    await poller.drain();
    expect(store.loads).toBe(2);
    expect(store.applies.map((a) => a.expectedVersion)).toEqual([0, 2]);
  });

  it('sends the next fetch before validating a page it was waiting for, and validates a page that arrives during an apply at once', async () => {
    // Every fetch and apply is held until the test releases it, so the order below is the poller's
    // own, whatever the machine's load (real timers here once raced on a busy CI machine).
    const feed = new FakeFeed(6);
    const log = new OrderedLog();
    let applying = false;
    let holding = true;
    const fetches = new Map<string, Gate>();
    const applies = new Map<string, Gate>();
    const gateFor = (gates: Map<string, Gate>, key: string) => {
      let gate = gates.get(key);
      if (!gate) gates.set(key, (gate = new Gate(!holding)));
      return gate;
    };
    const { poller, store } = harness({
      feed,
      deps: {
        fetchPage: async ({ iterator }) => {
          log.push(`fetch ${iterator}`);
          await gateFor(fetches, String(iterator)).passed;
          return feed.fetch(iterator);
        },
        preparePage: (events) => {
          log.push(`prepare ${(events[0] as { id: string }).id}${applying ? ' during apply' : ''}`);
          return { events: [], malformed: [], duplicatesInPage: 0, rowsJson: { events: '[]', malformed: '[]' }, prepareMs: 0 };
        },
      },
    });
    const apply = store.apply.bind(store);
    store.apply = async (input) => {
      applying = true;
      log.push(`apply ${input.nextIterator}${'prepared' in input ? ' prepared' : ''}`);
      await gateFor(applies, input.nextIterator).passed;
      applying = false;
      return apply(input);
    };
    const drained = poller.drain();
    await log.reached('fetch null');
    gateFor(fetches, 'null').open(); // page 1 arrives while the loop waits for it
    await log.reached('apply 2');
    gateFor(fetches, '2').open(); // page 2 arrives during page 1's apply
    await log.reached('prepare ev_2 during apply');
    gateFor(fetches, '4').open(); // page 3 arrives during that apply too
    await log.reached('prepare ev_4 during apply');
    holding = false;
    for (const gate of [...fetches.values(), ...applies.values()]) gate.open();
    await drained;
    // page 1: waited for, so unprepared (applyPage validates it) and page 2 is already requested;
    // page 2 arrived during page 1's apply: page 3 was requested at once, then page 2 validated;
    // page 3 arrived during that apply too, but two pages ahead is the most: no request for page 4 yet
    expect(log.entries.slice(0, 7)).toEqual([
      'fetch null',
      'fetch 2',
      'apply 2',
      'fetch 4',
      'prepare ev_2 during apply',
      'prepare ev_4 during apply',
      'apply 4 prepared',
    ]);
  });

  it('treats a database failure like any other: backs off, reloads the checkpoint, resumes', async () => {
    const { poller, store, delays, state } = harness({ feed: new FakeFeed(2), stopAfterSleeps: 2 });
    const lost = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    store.failNextApply = [lost];
    await poller.run();
    expect(delays[0]).toEqual({ kind: 'failure', consecutiveFailures: 1 });
    expect(store.loads).toBeGreaterThanOrEqual(2);
    expect(store.applies.map((a) => a.nextIterator)).toEqual(['2']);
    expect(state.snapshot().lastFailure).toBeNull();
  });

  it('stops consuming on a 401: no retry loop, no apply, reason in state', async () => {
    const feed = new FakeFeed(5);
    feed.script = [new UnauthorizedError({ method: 'GET', path: '/events' }, 'bad credentials')];
    const { poller, store, delays, state } = harness({ feed });
    await poller.run();
    expect(feed.requests).toEqual([null]);
    expect(delays).toEqual([]);
    expect(store.applies).toEqual([]);
    expect(store.version).toBe(0);
    expect(state.snapshot().fatalReason).toMatch(/^UnauthorizedError: GET \/events: 401/);
  });

  it('a 401 fails a drain instead of reporting success', async () => {
    const feed = new FakeFeed(5);
    feed.script = [new UnauthorizedError({ method: 'GET', path: '/events' }, undefined)];
    const { poller } = harness({ feed });
    await expect(poller.drain()).rejects.toThrow(/stopped: UnauthorizedError/);
  });

  it('a drain gives up after drainMaxFailures consecutive failures', async () => {
    const feed = new FakeFeed(5);
    const boom = () => new UpstreamError({ method: 'GET', path: '/events' }, 500, undefined);
    feed.script = [boom(), boom(), boom()];
    const { poller, delays } = harness({ feed, stopAfterSleeps: 100, deps: { drainMaxFailures: 3 } });
    await expect(poller.drain()).rejects.toThrow(/gave up after 3 consecutive failures; last: UpstreamError/);
    expect(delays).toHaveLength(2);
  });

  it('on a checkpoint conflict reloads the checkpoint and continues from the stored position, never overwriting it', async () => {
    const { poller, feed, store, delays } = harness({ feed: new FakeFeed(6), stopAfterSleeps: 100 });
    // an operator resets the checkpoint to the beginning while page 2 is being applied
    let applies = 0;
    const apply = store.apply.bind(store);
    store.apply = async (input) => {
      applies += 1;
      if (applies === 2) {
        store.iterator = null;
        store.version += 1;
      }
      return apply(input);
    };
    const summary = await poller.drain();
    expect(delays).toEqual([{ kind: 'conflict', streak: 1 }]);
    expect(store.loads).toBe(2);
    // after the reset the feed is read again from the beginning
    expect(feed.requests.slice(-3)).toEqual([null, '2', '4']);
    expect(store.applies.map((a) => a.nextIterator)).toEqual(['2', '2', '4', '6']);
    expect(summary.conflicts).toBe(1);
    expect(summary.duplicates).toBe(2);
  });

  it('fetches pages N+1 and N+2 while page N commits, and discards both when the commit conflicts', async () => {
    const feed = new FakeFeed(8);
    const prefetchSignals = new Map<string | null, AbortSignal>();
    const { poller, store } = harness({
      feed,
      stopAfterSleeps: 100,
      deps: {
        fetchPage: ({ iterator }, signal) => {
          if (!prefetchSignals.has(iterator)) prefetchSignals.set(iterator, signal);
          return feed.fetch(iterator);
        },
      },
    });
    const apply = store.apply.bind(store);
    let first = true;
    let requestsDuringCommit: Array<string | null> = [];
    store.apply = async (input) => {
      if (first) {
        first = false;
        // page 1 is "committing": page 2's request is on its way, and once it is answered, page 3's
        for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
        requestsDuringCommit = [...feed.requests];
        store.version += 1; // another writer moved the checkpoint meanwhile
      }
      return apply(input);
    };
    await poller.drain();
    // no more than two pages ahead of the one being applied
    expect(requestsDuringCommit).toEqual([null, '2', '4']);
    expect(prefetchSignals.get('2')?.aborted).toBe(true);
    expect(prefetchSignals.get('4')?.aborted).toBe(true);
    // the prefetched pages were never applied on top of the stale position
    expect(store.applies[0]).toMatchObject({ expectedVersion: 1, nextIterator: '2' });
  });

  it('stop() during a long wait returns promptly', async () => {
    const feed = new FakeFeed(1);
    const { poller } = harness({ feed, deps: { sleep: sleepUnlessAborted, nextDelay: () => 3_600_000 } });
    const run = poller.run();
    while (feed.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    // the wait is an hour: stop() returning at all proves it aborted the sleep
    await poller.stop();
    await run;
    await poller.stop(); // idempotent
  });

  it('stop() lets the page being applied commit, then returns', async () => {
    const feed = new FakeFeed(4);
    const { poller, store } = harness({ feed });
    const apply = store.apply.bind(store);
    let stopping: Promise<void> | undefined;
    store.apply = async (input) => {
      stopping ??= poller.stop();
      await new Promise((resolve) => setImmediate(resolve));
      return apply(input);
    };
    const summary = await poller.drain();
    await stopping;
    expect(store.applies).toHaveLength(1);
    expect(store.iterator).toBe('2');
    expect(summary.drained).toBe(false);
  });
});

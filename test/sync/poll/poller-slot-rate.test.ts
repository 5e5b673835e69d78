import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { defaultDelayPolicy, nextDelay } from '../../../src/sync/poll/next-delay.js';
import { Poller } from '../../../src/sync/poll/poller.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';

const silent = pino({ level: 'silent' });
const INTERVAL_MS = 5_000;
const PHASE_MS = 1_234;

/**
 * A caught-up feed on a fake clock, wired as feed-poller.ts wires the daemon's (the phased policy,
 * the clock's now, the poll's start): every poll's latency comes from `latencies` in turn, and every
 * sleep ends `earlyMs` before it was asked to (a timer may fire a millisecond early). Returns the
 * start time of each request once `polls` were sent.
 */
async function pollStarts(latencies: readonly number[], earlyMs: number, polls: number): Promise<number[]> {
  let now = 0;
  const starts: number[] = [];
  const holder: { poller?: Poller } = {};
  const policy = defaultDelayPolicy(INTERVAL_MS, 60_000, PHASE_MS);
  holder.poller = new Poller({
    fetchPage: async () => {
      starts.push(now);
      now += latencies[(starts.length - 1) % latencies.length] ?? 0;
      if (starts.length >= polls) void holder.poller?.stop();
      return { events: [], meta: { iterator: 'caught-up', done: true } };
    },
    applyPage: () => Promise.reject(new Error('a caught-up poll applies nothing')),
    loadCheckpoint: async () => ({ iterator: 'caught-up', version: 1, updatedAt: now }),
    clock: { now: () => now },
    sleep: async (ms) => {
      now += Math.max(0, ms - earlyMs);
    },
    nextDelay: (reason, pollStartedAt) => nextDelay(reason, policy, () => 0.5, now, pollStartedAt),
    state: new WorkerState({ now: () => now }),
    log: silent,
  });
  await holder.poller.run();
  return starts;
}

/** Requests per whole interval [k * INTERVAL_MS, (k + 1) * INTERVAL_MS), after the first one. */
function requestsPerInterval(starts: readonly number[]): number[] {
  const counts = new Map<number, number>();
  for (const start of starts.slice(1)) {
    const k = Math.floor((start - PHASE_MS + INTERVAL_MS / 2) / INTERVAL_MS);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts.values()];
}

describe('a caught-up feed polls once per interval, at its slot', () => {
  // a latency that falls from one poll to the next used to poll twice: the wait to the slot was
  // measured from the poll's end and the poll's duration was taken off it once more, so the next poll
  // left early by its predecessor's latency and a faster one ended before its own slot
  it.each([
    ['falling and rising latencies', [300, 20, 250, 5, 400, 1, 120, 60], 0],
    ['timers firing a millisecond early, sub-millisecond replies', [0, 0, 1, 0], 1],
    ['a steady 40 ms', [40], 0],
  ])('%s', async (_name, latencies, earlyMs) => {
    const starts = await pollStarts(latencies, earlyMs, 40);
    expect(starts).toHaveLength(40);
    // the first poll is at once; from then on one request per interval, start to start
    expect(requestsPerInterval(starts).every((count) => count === 1)).toBe(true);
    const gaps = starts.slice(2).map((start, i) => start - (starts[i + 1] as number));
    for (const gap of gaps) expect(Math.abs(gap - INTERVAL_MS)).toBeLessThanOrEqual(earlyMs);
    // each at the feed's slot (up to the early timer)
    for (const start of starts.slice(1)) {
      const into = (((start - PHASE_MS) % INTERVAL_MS) + INTERVAL_MS) % INTERVAL_MS;
      expect(Math.min(into, INTERVAL_MS - into)).toBeLessThanOrEqual(earlyMs);
    }
    // 40 requests over 39 intervals: the rate is one per interval
    const span = (starts.at(-1) as number) - (starts[1] as number);
    expect(span).toBeGreaterThanOrEqual(38 * INTERVAL_MS - 38 * earlyMs);
  });
});

import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { startProgressReporter } from '../../src/daemon/progress.js';
import { WorkerState } from '../../src/sync/state/worker-state.js';
import type { AppliedPageRecord } from '../../src/sync/state/worker-snapshot.js';

function page(received: number): AppliedPageRecord {
  return {
    received,
    inserted: received,
    duplicates: 0,
    statusChanges: 0,
    matched: received,
    quarantined: { malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 0 },
    durationMs: 5,
    done: false,
  };
}

/** A logger that keeps its lines, a clock and a timer queue the test moves by hand. */
function harness() {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  let now = 1_000_000;
  const clock = { now: () => now };
  const timers: { at: number; fn: () => void; cancelled: boolean }[] = [];
  const schedule = (fn: () => void, ms: number) => {
    const timer = { at: now + ms, fn, cancelled: false };
    timers.push(timer);
    return () => {
      timer.cancelled = true;
    };
  };
  const advance = (ms: number) => {
    now += ms;
    for (const timer of timers.splice(0)) {
      if (timer.cancelled) continue;
      if (timer.at <= now) timer.fn();
      else timers.push(timer);
    }
  };
  const state = new WorkerState(clock);
  state.becameLeader();
  const progress = () => lines.filter((l) => l.msg === 'drain progress');
  return { log, clock, schedule, advance, state, progress, pending: () => timers.filter((t) => !t.cancelled).length };
}

describe('progress without a TTY', () => {
  it('says the first applied page at once, then at most one line per interval, and the end of a burst when its interval ends', () => {
    const h = harness();
    const stop = startProgressReporter({
      state: h.state,
      clock: h.clock,
      log: h.log,
      tty: undefined,
      intervalMs: 5_000,
      schedule: h.schedule,
    });
    h.state.pageApplied(page(3), { iterator: 'a', version: 1 }, false);
    expect(h.progress()).toHaveLength(1);
    expect(h.progress()[0]).toMatchObject({ pages: 1, events: 3 });

    // a burst inside the interval: no line yet, one pending
    h.advance(1_000);
    h.state.pageApplied(page(4), { iterator: 'b', version: 2 }, false);
    h.advance(1_000);
    h.state.pageApplied(page(5), { iterator: 'c', version: 3 }, false);
    expect(h.progress()).toHaveLength(1);
    expect(h.pending()).toBe(1);

    // nothing follows the burst: its line comes when the interval ends
    h.advance(3_000);
    expect(h.progress()).toHaveLength(2);
    expect(h.progress()[1]).toMatchObject({ pages: 3, events: 12 });

    // a quiet daemon polling empty pages says nothing more
    h.advance(10_000);
    h.state.pageApplied(page(0), { iterator: 'c', version: 4 }, false);
    expect(h.progress()).toHaveLength(2);
    stop();
  });

  it('stop cancels a pending line', () => {
    const h = harness();
    const stop = startProgressReporter({
      state: h.state,
      clock: h.clock,
      log: h.log,
      tty: undefined,
      intervalMs: 5_000,
      schedule: h.schedule,
    });
    h.state.pageApplied(page(1), { iterator: 'a', version: 1 }, false);
    h.advance(100);
    h.state.pageApplied(page(1), { iterator: 'b', version: 2 }, false);
    stop();
    h.advance(10_000);
    expect(h.progress()).toHaveLength(1);
  });
});

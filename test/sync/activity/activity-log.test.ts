import { Writable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { createLogger } from '../../../src/log/log.js';
import { attachActivityLog } from '../../../src/sync/activity/activity-log.js';
import type { CheckpointMove } from '../../../src/sync/feed-admin/checkpoint-mover.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';
import type { AppliedPageRecord } from '../../../src/sync/state/worker-snapshot.js';

function setup(level: string, whoMoved: () => Promise<CheckpointMove | undefined> = async () => undefined) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _e, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  let now = 1_000;
  const clock = { now: () => now };
  const state = new WorkerState(clock);
  const log = createLogger({ level, destination }).child({ component: 'activity', feed: 'f' });
  const detach = attachActivityLog({ state, log, clock, intervalMs: 5_000, whoMoved });
  state.becameLeader();
  return { lines, state, detach, advance: (ms: number) => (now += ms) };
}

const page = (over: Partial<AppliedPageRecord> = {}): AppliedPageRecord => ({
  received: 250,
  inserted: 250,
  duplicates: 0,
  statusChanges: 0,
  matched: 0,
  quarantined: { malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 0 },
  durationMs: 40,
  done: false,
  ...over,
});
const q = (unmatched: number) => ({ malformed: 0, unmatched, ambiguous: 0, unsupported_version: 0 });

describe('the activity log of a feed', () => {
  test('a drain that quarantines everything warns with counts by reason, a few times, and says when it caught up', () => {
    const { lines, state, detach, advance } = setup('info');
    for (let i = 0; i < 400; i += 1) {
      advance(50);
      state.pageApplied(page({ matched: 0, quarantined: q(250), done: i === 399 }), { iterator: `p${i}`, version: i + 1 }, false);
    }
    detach();
    const warnings = lines.filter((l) => l.level === 40);
    // 400 pages over 20 s at one warning per 5 s: the first page, then one per interval, then the rest at caught-up
    expect(warnings.length).toBeGreaterThanOrEqual(4);
    expect(warnings.length).toBeLessThanOrEqual(6);
    expect(warnings.reduce((sum, w) => sum + Number(w.quarantined), 0)).toBe(100_000);
    expect(warnings[0]).toMatchObject({ by_reason: { unmatched: 250 }, pages: 1, component: 'activity', feed: 'f' });
    const caughtUp = lines.find((l) => String(l.msg).startsWith('caught up after a backlog'));
    expect(caughtUp).toMatchObject({ level: 30, events: 100_000, pages: 400 });
    expect(Number(caughtUp?.seconds)).toBeCloseTo(20, 0);
    // info level: no debug lines
    expect(lines.some((l) => l.level === 20)).toBe(false);
  });

  test('LOG_LEVEL=debug adds a line per page and per empty poll with timings', () => {
    const { lines, state } = setup('debug');
    state.pageApplied(
      page({ done: true, timingsMs: { prepare: 1.234, validate: 0, write: 5.55, commit: 0.91 } }),
      { iterator: 'a', version: 1 },
      false,
    );
    state.pollSucceeded({ done: true, noProgress: false, durationMs: 12 });
    expect(lines.find((l) => l.msg === 'page applied')).toMatchObject({ level: 20, ms: 40, timings_ms: { prepare: 1.2, write: 5.6 } });
    expect(lines.find((l) => l.msg === 'poll: nothing new')).toMatchObject({ level: 20, ms: 12, done: true });
  });

  test('a checkpoint moved by a reset warns with who, from and to; our own commits do not', async () => {
    const move: CheckpointMove = {
      by: 'ana@ops-host',
      from: 'it-9',
      to: null,
      at: new Date('2025-01-01T00:00:00Z'),
      actor: 'postgres (ana@ops-host)',
    };
    const { lines, state } = setup('info', async () => move);
    state.checkpointLoaded({ iterator: 'it-8', version: 8, updatedAt: 0 });
    state.pageApplied(page({ done: true }), { iterator: 'it-9', version: 9 }, false);
    state.checkpointLoaded({ iterator: 'it-9', version: 9, updatedAt: 0 });
    expect(lines.filter((l) => l.level === 40)).toEqual([]);
    state.checkpointLoaded({ iterator: null, version: 10, updatedAt: 0 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.find((l) => l.level === 40)).toMatchObject({
      from: 'it-9',
      to: null,
      version: 10,
      by: 'ana@ops-host',
      actor: 'postgres (ana@ops-host)',
    });
  });

  test('a move without a recorded reset is put down to another worker', async () => {
    const { lines, state } = setup('info');
    state.checkpointLoaded({ iterator: 'a', version: 1, updatedAt: 0 });
    state.checkpointLoaded({ iterator: 'b', version: 2, updatedAt: 0 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.find((l) => l.level === 40)).toMatchObject({ from: 'a', to: 'b', by: 'another worker (no reset recorded)' });
  });
});

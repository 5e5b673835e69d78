import { describe, expect, test } from 'vitest';
import { defaultDelayPolicy, nextDelay } from '../../../src/sync/poll/next-delay.js';
import { pollPhaseMs, slotDelay, slotDelayAfterPoll } from '../../../src/sync/poll/poll-phase.js';

describe('slotDelay', () => {
  test.each([
    ['just after the slot: a whole interval less the time past it', 10_100, 5_000, 0, 4_900],
    ['just before the slot', 14_900, 5_000, 0, 100],
    ['on the slot: the next one', 15_000, 5_000, 0, 5_000],
    ['a phase inside the interval', 10_000, 5_000, 1_250, 1_250],
    ['past the phase in this interval', 11_300, 5_000, 1_250, 4_950],
    ['a clock before the phase', 0, 5_000, 4_999, 4_999],
  ])('%s', (_label, now, interval, phase, expected) => {
    expect(slotDelay(now, interval, phase)).toBe(expected);
  });

  test('never longer than the interval, never negative', () => {
    for (let now = 0; now < 20_000; now += 37) {
      const delay = slotDelay(now, 5_000, 1_234);
      expect(delay).toBeGreaterThan(0);
      expect(delay).toBeLessThanOrEqual(5_000);
    }
  });
});

describe('pollPhaseMs', () => {
  test('within the interval, the same for the same feed, different for different feeds', () => {
    expect(pollPhaseMs('clinic-a', 5_000)).toBe(pollPhaseMs('clinic-a', 5_000));
    expect(pollPhaseMs('clinic-a', 5_000)).not.toBe(pollPhaseMs('clinic-b', 5_000));
    for (const feed of ['a', 'default', 'clinic-041', 'z'.repeat(64)]) {
      const phase = pollPhaseMs(feed, 5_000);
      expect(phase).toBeGreaterThanOrEqual(0);
      expect(phase).toBeLessThan(5_000);
    }
  });

  test('500 caught-up feeds at the default 5 s interval: the worst 1-second count within 10% of the mean', () => {
    const bins = [0, 0, 0, 0, 0];
    for (let i = 0; i < 500; i++) {
      const phase = pollPhaseMs(`clinic-${String(i).padStart(3, '0')}`, 5_000);
      bins[Math.floor(phase / 1_000)] = (bins[Math.floor(phase / 1_000)] ?? 0) + 1;
    }
    // measured: 106 against a mean of 100 (the names are hashed, not numbered: every replica agrees without coordination)
    expect(Math.max(...bins)).toBeLessThanOrEqual(110);
    expect(Math.min(...bins)).toBeGreaterThanOrEqual(90);
  });
});

describe('nextDelay with a phase', () => {
  test('a caught-up feed waits for its slot; the other waits keep their schedules', () => {
    const policy = defaultDelayPolicy(5_000, 60_000, 2_000);
    expect(nextDelay({ kind: 'caught-up' }, policy, () => 0.5, 10_500)).toBe(1_500);
    expect(nextDelay({ kind: 'caught-up' }, policy, () => 0.5, 12_000)).toBe(5_000);
    // without the clock (a caller that passes none), the jittered interval as before
    expect(nextDelay({ kind: 'caught-up' }, policy, () => 0)).toBe(5_000);
    expect(nextDelay({ kind: 'no-progress', streak: 1 }, policy, () => 0, 10_500)).toBe(5_000);
    expect(nextDelay({ kind: 'conflict', streak: 1 }, policy, () => 0, 10_500)).toBe(0);
  });

  test("given the poll's start, the wait to the slot is measured from that start (the loop takes the time since off)", () => {
    const policy = defaultDelayPolicy(5_000, 60_000, 2_000);
    // polled at its slot (12 000), whenever it ended: the next slot, 17 000
    expect(nextDelay({ kind: 'caught-up' }, policy, () => 0.5, 12_300, 12_000)).toBe(5_000);
    expect(nextDelay({ kind: 'caught-up' }, policy, () => 0.5, 11_999, 11_999)).toBe(5_001);
    // a poll that started late by less than the jitter's share still keeps the next slot
    expect(nextDelay({ kind: 'caught-up' }, policy, () => 0.5, 16_700, 16_400)).toBe(600);
  });
});

describe('slotDelayAfterPoll', () => {
  test.each([
    // [started at, min gap, expected]: the first slot (phase 1 234, interval 5 000) at least the gap after the start
    [1_234, 500, 5_000],
    [1_233, 500, 5_001],
    [1_240, 500, 4_994],
    [5_734, 500, 500],
    [5_735, 500, 5_499],
    [0, 0, 1_234],
  ])('a poll started at %i, gap %i: %i', (startedAt, gap, expected) => {
    expect(slotDelayAfterPoll(startedAt, 5_000, 1_234, gap)).toBe(expected);
  });
});

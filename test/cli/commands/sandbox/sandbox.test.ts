import { describe, expect, it } from 'vitest';
import { prescriptionsForEvents } from '../../../../src/cli/commands/sandbox/sandbox.js';

describe('sandbox --seed-events', () => {
  it.each([
    [0, undefined, 0],
    [1, undefined, 1],
    [4, undefined, 1],
    [5, undefined, 2],
    [1_000_000, undefined, 250_000],
    [10, 2, 4], // 4 prescriptions, 2 rejected: 2*4 + 2*1 = 10 events
    [11, 2, 5],
  ])('%i events (reject every %s) → %i prescriptions', (events, rejectEvery, expected) => {
    expect(prescriptionsForEvents(events, rejectEvery)).toBe(expected);
  });
});

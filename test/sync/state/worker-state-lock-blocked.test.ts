import { describe, expect, it } from 'vitest';
import type { FeedStop } from '../../../src/sync/state/worker-snapshot.js';
import { WorkerState } from '../../../src/sync/state/worker-state.js';

// Issue 33: pages that keep failing on a lock show the lock and its holder in /readyz and in the
// feed stop (feed_stops: `status`, the console's Feeds page); the next page applied clears it.
describe('WorkerState: pages failing on a lock', () => {
  const LOCK = "the change clock of feed a (change_clocks), held by backend pid 7 (role app_a, application_name 'x')";

  it('records the lock from the second failure in a row, and a page applied clears it', () => {
    let now = 1_000;
    const state = new WorkerState({ now: () => now });
    const stops: Array<FeedStop | null> = [];
    state.subscribe({ stopChanged: (stop) => stops.push(stop) });
    state.pollFailed('database', 'LockWaitTimeoutError: …', undefined, LOCK);
    expect(state.snapshot().lockBlocked).toEqual({ lock: LOCK, since: 1_000, failures: 1 });
    expect(stops).toEqual([]);
    now = 2_000;
    state.pollFailed('database', 'LockWaitTimeoutError: …', undefined, LOCK);
    expect(state.snapshot().lockBlocked).toEqual({ lock: LOCK, since: 1_000, failures: 2 });
    expect(stops).toEqual([{ reason: `blocked: 2 pages in a row timed out waiting for ${LOCK} (retrying)`, command: null }]);
    state.pageApplied(
      {
        received: 0,
        inserted: 0,
        duplicates: 0,
        statusChanges: 0,
        matched: 0,
        quarantined: { malformed: 0, unmatched: 0, ambiguous: 0, unsupported_version: 0 },
        done: true,
      } as never,
      null,
      false,
    );
    expect(state.snapshot().lockBlocked).toBeNull();
    expect(stops.at(-1)).toBeNull();
  });

  it('a failure that is not a lock wait leaves no lock recorded', () => {
    const state = new WorkerState({ now: () => 0 });
    state.pollFailed('upstream', 'NetworkError: …');
    expect(state.snapshot().lockBlocked).toBeNull();
  });
});

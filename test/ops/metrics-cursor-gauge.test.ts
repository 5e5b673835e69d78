import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerCursorGauge } from '../../src/ops/metrics-cursor-gauge.js';
import { WorkerState } from '../../src/sync/state/worker-state.js';

describe('intake_sync_feed_cursor_expired', () => {
  it('is 0 for the feed until its cursor is refused, 1 while stopped, 0 again once resync moves it', async () => {
    const registry = new Registry();
    const state = new WorkerState({ now: () => 0 });
    registerCursorGauge(registry, [{ feed: 'east', state }]);
    const value = async () => (await registry.getSingleMetricAsString('intake_sync_feed_cursor_expired')).split('\n').at(-1);
    expect(await value()).toBe('intake_sync_feed_cursor_expired{feed="east"} 0');
    state.cursorStopped('east', 'expired');
    expect(await value()).toBe('intake_sync_feed_cursor_expired{feed="east"} 1');
    state.cursorCleared();
    expect(await value()).toBe('intake_sync_feed_cursor_expired{feed="east"} 0');
  });
});

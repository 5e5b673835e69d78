import { Gauge, type Registry } from 'prom-client';
import type { FeedStateSource } from './metrics-feed-gauges.js';

/**
 * intake_sync_feed_cursor_expired{feed}: 1 while the feed is stopped at a position the operator
 * will not (or may not) serve (see src/sync/state/cursor-problem.ts), 0 otherwise. Created at 0, so an
 * alert on it has a series before the first expiry.
 */
export function registerCursorGauge(registry: Registry, feeds: readonly FeedStateSource[]): void {
  new Gauge({
    name: 'intake_sync_feed_cursor_expired',
    help: '1 while the feed is stopped because its stored iterator expired, was refused, or may lie past retention; fix with intake-sync resync',
    labelNames: ['feed'] as const,
    registers: [registry],
    collect() {
      for (const { feed, state } of feeds) this.set({ feed }, state.snapshot().cursorProblem === null ? 0 : 1);
    },
  });
}

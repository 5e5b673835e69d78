import { Gauge, type Registry } from 'prom-client';
import type { WorkerState } from '../sync/worker-state.js';

/**
 * intake_sync_feed_cursor_expired{feed}: 1 while the feed is stopped at a position the operator
 * will not (or may not) serve (see src/sync/cursor-problem.ts), 0 otherwise. Created at 0, so an
 * alert on it has a series before the first expiry.
 */
export function registerCursorGauge(registry: Registry, state: WorkerState, feed: string): void {
  new Gauge({
    name: 'intake_sync_feed_cursor_expired',
    help: '1 while the feed is stopped because its stored iterator expired, was refused, or may lie past retention; fix with intake-sync resync',
    labelNames: ['feed'] as const,
    registers: [registry],
    collect() {
      this.set({ feed }, state.snapshot().cursorProblem === null ? 0 : 1);
    },
  });
}

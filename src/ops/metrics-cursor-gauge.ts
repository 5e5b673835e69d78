import { Gauge, type Registry } from 'prom-client';
import { isRetentionProblem } from '../sync/state/cursor-problem.js';
import type { FeedStateSource } from './metrics-feed-gauges.js';

/**
 * intake_sync_feed_cursor_expired{feed}: 1 while the feed is stopped at a position the operator
 * will not (or may not) serve (see src/sync/state/cursor-problem.ts), 0 otherwise; and
 * intake_sync_feed_event_too_large{feed}: 1 while it is stopped because the next event alone is
 * larger than MAX_RESPONSE_BYTES (a different fix: the cap or `events skip`, never resync).
 * Created at 0, so an alert on either has a series before the first stop.
 */
export function registerCursorGauge(registry: Registry, feeds: readonly FeedStateSource[]): void {
  new Gauge({
    name: 'intake_sync_feed_cursor_expired',
    help: '1 while the feed is stopped because its stored iterator expired, was refused, or may lie past retention; fix with intake-sync resync',
    labelNames: ['feed'] as const,
    registers: [registry],
    collect() {
      for (const { feed, state } of feeds) {
        const problem = state.snapshot().cursorProblem;
        this.set({ feed }, problem !== null && isRetentionProblem(problem.kind) ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'intake_sync_feed_event_too_large',
    help: '1 while the feed is stopped because the next event alone exceeds MAX_RESPONSE_BYTES; raise it or run intake-sync events skip',
    labelNames: ['feed'] as const,
    registers: [registry],
    collect() {
      for (const { feed, state } of feeds) this.set({ feed }, state.snapshot().cursorProblem?.kind === 'oversized-event' ? 1 : 0);
    },
  });
}

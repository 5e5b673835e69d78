import type { DrainSummary } from '../sync/poll/poller.js';

/** The `run --once` summary as one JSON object (snake_case, like the rest of --json output). */
export function summaryJson(summary: DrainSummary): Record<string, unknown> {
  return {
    drained: summary.drained,
    pages: summary.pages,
    events: summary.received,
    inserted: summary.inserted,
    duplicates: summary.duplicates,
    status_changes: summary.statusChanges,
    matched: summary.matched,
    quarantined: { ...summary.quarantined },
    checkpoint_conflicts: summary.conflicts,
    upstream_retries: summary.upstreamRetries,
    elapsed_ms: summary.elapsedMs,
    events_per_second: Math.round(summary.eventsPerSecond),
  };
}

/** The `run --once` summary for a human. */
export function summaryText(summary: DrainSummary): string {
  const q = summary.quarantined;
  return [
    summary.drained ? 'drained: the feed is caught up' : 'stopped before the feed was caught up',
    `pages           ${summary.pages}`,
    `events          ${summary.received}`,
    `inserted        ${summary.inserted}`,
    `duplicates      ${summary.duplicates}`,
    `status changes  ${summary.statusChanges}`,
    `quarantined     malformed ${q.malformed}, unmatched ${q.unmatched}, ambiguous ${q.ambiguous}, unsupported_version ${q.unsupported_version}`,
    `elapsed         ${(summary.elapsedMs / 1000).toFixed(1)} s (${Math.round(summary.eventsPerSecond)} events/s)`,
  ].join('\n');
}

import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { WorkerState } from '../sync/worker-state.js';

const QUARANTINE_REASONS = ['malformed', 'unmatched', 'ambiguous'] as const;

/** The worker's Prometheus metrics on a registry of their own (never the global one). */
export interface SyncMetrics {
  registry: Registry;
  /** detaches from the worker state */
  close(): void;
}

/**
 * Counts and the poll histogram follow each applied page; gauges read the
 * worker state at scrape time. Labels are fixed enums, never event content.
 */
export function createSyncMetrics(state: WorkerState, clock: { now(): number }): SyncMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const applied = new Counter({ name: 'intake_sync_events_applied_total', help: 'Events newly written to the event history', registers });
  const quarantined = new Counter({
    name: 'intake_sync_events_quarantined_total',
    help: 'Events quarantined, by reason',
    labelNames: ['reason'],
    registers,
  });
  for (const reason of QUARANTINE_REASONS) quarantined.inc({ reason }, 0);
  const pages = new Counter({ name: 'intake_sync_pages_total', help: 'Pages fetched and committed', registers });
  const retries = new Counter({ name: 'intake_sync_upstream_retries_total', help: 'Requests to the operator retried by the client', registers });
  const pollDuration = new Histogram({
    name: 'intake_sync_poll_duration_seconds',
    help: 'Time from the start of a page fetch to its commit',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });

  const snapshot = () => state.snapshot();
  new Gauge({
    name: 'intake_sync_last_success_timestamp_seconds',
    help: 'Unix time of the last committed page (0 before the first)',
    registers,
    collect() {
      this.set((snapshot().lastSuccessAt ?? 0) / 1000);
    },
  });
  new Gauge({
    name: 'intake_sync_consecutive_failures',
    help: 'Failed polls since the last success',
    registers,
    collect() {
      this.set(snapshot().consecutiveFailures);
    },
  });
  new Gauge({
    name: 'intake_sync_checkpoint_age_seconds',
    help: 'Seconds since the checkpoint last moved (0 before it is read)',
    registers,
    collect() {
      const checkpoint = snapshot().checkpoint;
      this.set(checkpoint ? Math.max(0, clock.now() - checkpoint.updatedAt) / 1000 : 0);
    },
  });
  new Gauge({
    name: 'intake_sync_checkpoint_version',
    help: 'Checkpoint version this process last read or committed (each committed page adds 1)',
    registers,
    collect() {
      this.set(snapshot().checkpoint?.version ?? 0);
    },
  });
  new Gauge({
    name: 'intake_sync_leader',
    help: '1 while this process holds the feed lease, 0 as standby',
    registers,
    collect() {
      this.set(snapshot().role === 'leader' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'intake_sync_backlog',
    help: '1 while draining a backlog (the last page said done=false)',
    registers,
    collect() {
      this.set(snapshot().backlog ? 1 : 0);
    },
  });
  new Gauge({
    name: 'intake_sync_no_progress_streak',
    help: 'Consecutive pages that came back at the same iterator with nothing new',
    registers,
    collect() {
      this.set(snapshot().noProgressStreak);
    },
  });
  new Gauge({
    name: 'intake_sync_consuming_stopped',
    help: '1 once consuming stopped for good (the operator refused the credentials)',
    registers,
    collect() {
      this.set(snapshot().fatalReason === null ? 0 : 1);
    },
  });

  const pagePhase = new Histogram({
    name: 'intake_sync_page_phase_seconds',
    help: 'Time of each part of applying a page: prepare (parse, validate, serialise; overlapped with the previous commit when prefetched), validate (the part of prepare on the critical path), write, commit',
    labelNames: ['phase'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers,
  });
  const unsubscribe = state.subscribe({
    pageApplied(page) {
      if (page.timingsMs) {
        for (const phase of ['prepare', 'validate', 'write', 'commit'] as const) pagePhase.observe({ phase }, page.timingsMs[phase] / 1000);
      }
      pages.inc();
      applied.inc(page.inserted);
      for (const reason of QUARANTINE_REASONS) quarantined.inc({ reason }, page.quarantined[reason]);
      pollDuration.observe(page.durationMs / 1000);
    },
    upstreamRetry() {
      retries.inc();
    },
  });
  return { registry, close: unsubscribe };
}

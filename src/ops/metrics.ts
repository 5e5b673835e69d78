import { registerOverdueMetric, type OverdueSource } from './metrics-overdue.js';
import { registerCursorGauge } from './metrics-cursor-gauge.js';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { QUARANTINE_REASONS } from '../store-api/triage/vocabulary.js';
import type { WorkerState } from '../sync/state/worker-state.js';
import { UPSTREAM_FAILURE_REASONS } from '../sync/state/worker-snapshot.js';
import { registerFeedGauges } from './metrics-feed-gauges.js';
import { registerBuildInfo } from './metrics-build-info.js';
import { registerProvidedGauges, type OutboxSource, type QuarantineSource } from './metrics-provided-gauges.js';
import { registerRetentionMetrics, type RetentionSource, type TableSizeSource } from './metrics-retention.js';
import { registerStatisticsMetrics } from './metrics-statistics.js';

export type { OutboxSource, QuarantineSource } from './metrics-provided-gauges.js';

/** Resolution of the event-loop lag histogram behind nodejs_eventloop_lag_*_seconds. */
export const EVENT_LOOP_MONITORING_MS = 100;

/** The worker's Prometheus metrics on a registry of their own (never the global one). */
export interface SyncMetrics {
  registry: Registry;
  /** detaches from the worker state */
  close(): void;
}

/** One feed of a process: its name (the `feed` label), its worker state and its database-backed sources. */
export interface FeedMetricsSource {
  feed: string;
  state: WorkerState;
  quarantine?: QuarantineSource;
  outbox?: OutboxSource;
  /** the feed's last retention pass (read from the database at scrape time); 0 when absent */
  retention?: RetentionSource;
}

export interface SyncMetricsOptions {
  /** FEED_NAME: every intake_sync_* series carries it as its `feed` label */
  feed: string;
  /** POLL_INTERVAL_MS and the /readyz poll-age limit, exported so alert thresholds follow the configuration */
  pollIntervalMs: number;
  readyMaxPollAgeMs: number;
  /** open quarantine rows by reason (read from the database at scrape time); 0s when absent */
  quarantine?: QuarantineSource;
  /** the outbox's pending rows and the age of the oldest (at scrape time); 0s when absent */
  outbox?: OutboxSource;
  /** the feed's last retention pass (at scrape time); 0 when absent */
  retention?: RetentionSource;
  /** RETENTION_INTERVAL, exported for the "cleaner not running" alert */
  retentionIntervalMs?: number;
  /** the schema's table sizes (at scrape time); no series when absent */
  tableSizes?: TableSizeSource;
  /** overdue prescriptions per feed and stage (intake_sync_prescriptions_overdue) */
  overdue?: OverdueSource;
}

/**
 * Counts and histograms follow the worker state's events; gauges read it at
 * scrape time. Labels are the feed name and fixed enums, never event content.
 * Every labelled series is created at 0 up front, so alert rules and dashboards
 * see it (and rate() works) before the first failure.
 */
export function createSyncMetrics(state: WorkerState, clock: { now(): number }, options: SyncMetricsOptions): SyncMetrics {
  const { feed, quarantine, outbox, retention, ...limits } = options;
  return createFeedsMetrics(
    [{ feed, state, ...(quarantine ? { quarantine } : {}), ...(outbox ? { outbox } : {}), ...(retention ? { retention } : {}) }],
    clock,
    limits,
  );
}

/**
 * The metrics of every feed of one process on ONE registry: each intake_sync_* series once per
 * feed label, so a feed that fails (401, upstream down) shows in its own series beside the others.
 */
export function createFeedsMetrics(
  feeds: readonly FeedMetricsSource[],
  clock: { now(): number },
  limits: Pick<SyncMetricsOptions, 'pollIntervalMs' | 'readyMaxPollAgeMs' | 'retentionIntervalMs' | 'tableSizes' | 'overdue'> & {
    /** false: no process metrics here (a daemon whose feeds change keeps them on a registry of its own) */
    processMetrics?: boolean;
  },
): SyncMetrics {
  const registry = new Registry();
  // the event-loop lag histogram samples on a timer: prom-client's default 10 ms wakes an idle daemon
  // 100 times a second, about 0.5% of a core (measured), ten times what its polls cost; 100 ms still
  // catches any stall that matters to a loop polling every few seconds
  if (limits.processMetrics !== false)
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_MS });
  const registers = [registry];

  const applied = new Counter({
    name: 'intake_sync_events_applied_total',
    help: 'Events newly written to the event history',
    labelNames: ['feed'],
    registers,
  });
  const quarantined = new Counter({
    name: 'intake_sync_events_quarantined_total',
    help: 'Events quarantined by this process, by reason',
    labelNames: ['feed', 'reason'],
    registers,
  });
  const pages = new Counter({ name: 'intake_sync_pages_total', help: 'Pages fetched and committed', labelNames: ['feed'], registers });
  // every successful GET /events, the empty polls of a caught-up worker included (they commit nothing,
  // so they are not pages): the denominator of the upstream error rate
  const polls = new Counter({
    name: 'intake_sync_polls_total',
    help: 'Successful polls of the feed: pages committed and empty polls',
    labelNames: ['feed'],
    registers,
  });
  const retries = new Counter({
    name: 'intake_sync_upstream_retries_total',
    help: 'Requests to the operator retried by the client, by why the attempt failed',
    labelNames: ['feed', 'reason'],
    registers,
  });
  const upstreamFailures = new Counter({
    name: 'intake_sync_upstream_failures_total',
    help: 'Failed requests to the operator, by reason: every failed attempt, retried or final',
    labelNames: ['feed', 'reason'],
    registers,
  });
  const pollFailures = new Counter({
    name: 'intake_sync_poll_failures_total',
    help: "Polls that failed after the client's retries, by side (upstream: the operator; database: ours)",
    labelNames: ['feed', 'source'],
    registers,
  });
  const leaseAcquisitions = new Counter({
    name: 'intake_sync_lease_acquisitions_total',
    help: 'Times this process took the feed lease (a fleet that keeps taking it is flapping)',
    labelNames: ['feed'],
    registers,
  });
  const pollDuration = new Histogram({
    name: 'intake_sync_poll_duration_seconds',
    help: 'Time from the start of a page fetch to its commit',
    labelNames: ['feed'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  const pagePhase = new Histogram({
    name: 'intake_sync_page_phase_seconds',
    help: 'Time of each part of applying a page: prepare (parse, validate, serialise; overlapped with the previous commit when prefetched), validate (the part of prepare on the critical path), write, commit',
    labelNames: ['feed', 'phase'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers,
  });

  registerFeedGauges(registers, feeds, clock, limits);
  registerProvidedGauges(registers, feeds);
  registerCursorGauge(registry, feeds);
  registerBuildInfo(registry, feeds);
  registerOverdueMetric(
    registers,
    feeds.map((f) => f.feed),
    limits.overdue,
  );
  const closeRetention = registerRetentionMetrics(registers, feeds, {
    retentionIntervalMs: limits.retentionIntervalMs,
    tableSizes: limits.tableSizes,
  });
  const closeStatistics = registerStatisticsMetrics(registers, feeds);

  const unsubscribes = feeds.map(({ feed, state }) => {
    // every labelled series exists at 0 from the start (see above)
    applied.inc({ feed }, 0);
    for (const reason of QUARANTINE_REASONS) quarantined.inc({ feed, reason }, 0);
    pages.inc({ feed }, 0);
    polls.inc({ feed }, 0);
    for (const source of ['upstream', 'database']) pollFailures.inc({ feed, source }, 0);
    leaseAcquisitions.inc({ feed }, 0);
    for (const reason of UPSTREAM_FAILURE_REASONS) {
      retries.inc({ feed, reason }, 0);
      upstreamFailures.inc({ feed, reason }, 0);
    }
    return state.subscribe({
      pageApplied(page) {
        if (page.timingsMs) {
          for (const phase of ['prepare', 'validate', 'write', 'commit'] as const)
            pagePhase.observe({ feed, phase }, page.timingsMs[phase] / 1000);
        }
        pages.inc({ feed });
        polls.inc({ feed });
        applied.inc({ feed }, page.inserted);
        for (const reason of QUARANTINE_REASONS) quarantined.inc({ feed, reason }, page.quarantined[reason]);
        pollDuration.observe({ feed }, page.durationMs / 1000);
      },
      emptyPoll() {
        polls.inc({ feed });
      },
      upstreamRetry(reason) {
        retries.inc({ feed, reason });
        upstreamFailures.inc({ feed, reason });
      },
      pollFailed(source, reason) {
        pollFailures.inc({ feed, source });
        if (reason) upstreamFailures.inc({ feed, reason });
      },
      fatal() {
        // a 401 is not retried and not a poll failure: it stops consuming (see intake_sync_consuming_stopped)
        upstreamFailures.inc({ feed, reason: 'unauthorized' });
      },
      becameLeader() {
        leaseAcquisitions.inc({ feed });
      },
    });
  });
  return {
    registry,
    close: () => {
      unsubscribes.forEach((unsubscribe) => unsubscribe());
      closeRetention();
      closeStatistics();
    },
  };
}

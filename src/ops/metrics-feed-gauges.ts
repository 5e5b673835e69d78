import { Gauge, type Registry } from 'prom-client';
import { feedLagSeconds } from '../sync/feed-lag.js';
import type { WorkerSnapshot, WorkerState } from '../sync/worker-state.js';

interface FeedGaugeOptions {
  feed: string;
  pollIntervalMs: number;
  readyMaxPollAgeMs: number;
}

/** One gauge with a `feed` label whose value is read from the worker state at scrape time. */
function feedGauge(registers: Registry[], feed: string, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    labelNames: ['feed'],
    registers,
    collect() {
      this.set({ feed }, read());
    },
  });
}

/**
 * The gauges the alert rules and the dashboard read (deploy/prometheus, deploy/grafana): role,
 * heartbeat, position, lag, failure state, and the configured limits the rules compare against.
 */
export function registerFeedGauges(registers: Registry[], state: WorkerState, clock: { now(): number }, options: FeedGaugeOptions): void {
  const { feed } = options;
  // one snapshot per scrape would be nicer, but prom-client collects gauges one by one; a snapshot is a cheap copy
  const snap = (): WorkerSnapshot => state.snapshot();
  const seconds = (ms: number | null) => (ms ?? 0) / 1000;

  // a worker parked by a 401 has released the lease, though its role still reads leader
  feedGauge(registers, feed, 'intake_sync_leader', '1 while this process holds the feed lease and consumes', () => {
    const { role, fatalReason } = snap();
    return role === 'leader' && fatalReason === null ? 1 : 0;
  });
  feedGauge(registers, feed, 'intake_sync_standby', '1 while this process waits for the feed lease as standby', () => (snap().role === 'standby' ? 1 : 0));
  feedGauge(registers, feed, 'intake_sync_last_success_timestamp_seconds', 'Unix time of the last committed page (0 before the first)', () => seconds(snap().lastSuccessAt));
  feedGauge(
    registers,
    feed,
    'intake_sync_last_poll_timestamp_seconds',
    "Unix time the last poll ended, successful or not: the poll loop's heartbeat (0 before the first)",
    () => seconds(snap().lastPollAt),
  );
  feedGauge(
    registers,
    feed,
    'intake_sync_newest_event_timestamp_seconds',
    'occurred_at of the newest event applied since this process started, as Unix time (0 before the first)',
    () => seconds(snap().newestOccurredAt),
  );
  feedGauge(
    registers,
    feed,
    'intake_sync_lag_seconds',
    'While draining a backlog: seconds since the newest applied event occurred; 0 when caught up or standby',
    () => feedLagSeconds(snap(), clock.now()),
  );
  feedGauge(registers, feed, 'intake_sync_consecutive_failures', 'Failed polls since the last success', () => snap().consecutiveFailures);
  feedGauge(registers, feed, 'intake_sync_checkpoint_age_seconds', 'Seconds since the checkpoint last moved (0 before it is read)', () => {
    const checkpoint = snap().checkpoint;
    return checkpoint ? Math.max(0, clock.now() - checkpoint.updatedAt) / 1000 : 0;
  });
  feedGauge(
    registers,
    feed,
    'intake_sync_checkpoint_version',
    'Checkpoint version this process last read or committed (each committed page adds 1)',
    () => snap().checkpoint?.version ?? 0,
  );
  feedGauge(registers, feed, 'intake_sync_backlog', '1 while draining a backlog (the last page said done=false)', () => (snap().backlog ? 1 : 0));
  feedGauge(
    registers,
    feed,
    'intake_sync_no_progress_streak',
    'Consecutive pages that came back at the same iterator with nothing new',
    () => snap().noProgressStreak,
  );
  feedGauge(
    registers,
    feed,
    'intake_sync_consuming_stopped',
    '1 once consuming stopped for good (the operator refused the credentials: 401)',
    () => (snap().fatalReason === null ? 0 : 1),
  );
  feedGauge(registers, feed, 'intake_sync_poll_interval_seconds', 'POLL_INTERVAL_MS: how often a caught-up leader polls', () => options.pollIntervalMs / 1000);
  feedGauge(
    registers,
    feed,
    'intake_sync_ready_max_poll_age_seconds',
    "READY_MAX_POLL_AGE_MS: /readyz fails when the leader's last successful poll is older; the stall alerts use the same limit",
    () => options.readyMaxPollAgeMs / 1000,
  );
}

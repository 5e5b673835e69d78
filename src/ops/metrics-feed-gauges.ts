import { Gauge, type Registry } from 'prom-client';
import { feedLagSeconds } from '../sync/state/feed-lag.js';
import type { WorkerState } from '../sync/state/worker-state.js';
import type { WorkerSnapshot } from '../sync/state/worker-snapshot.js';

interface FeedGaugeOptions {
  pollIntervalMs: number;
  readyMaxPollAgeMs: number;
}

/** A feed of this process and the state its gauges read. */
export interface FeedStateSource {
  feed: string;
  state: WorkerState;
}

/** One gauge with a `feed` label per feed, each value read from that feed's worker state at scrape time. */
function feedGauge(
  registers: Registry[],
  feeds: readonly FeedStateSource[],
  name: string,
  help: string,
  read: (snap: WorkerSnapshot) => number,
): void {
  new Gauge({
    name,
    help,
    labelNames: ['feed'],
    registers,
    collect() {
      // prom-client collects gauges one by one; a snapshot is a cheap copy
      for (const { feed, state } of feeds) this.set({ feed }, read(state.snapshot()));
    },
  });
}

/**
 * The gauges the alert rules and the dashboard read (deploy/prometheus, deploy/grafana): role,
 * heartbeat, position, lag, failure state, and the configured limits the rules compare against.
 */
export function registerFeedGauges(
  registers: Registry[],
  feeds: readonly FeedStateSource[],
  clock: { now(): number },
  options: FeedGaugeOptions,
): void {
  const seconds = (ms: number | null) => (ms ?? 0) / 1000;

  // a worker parked by a 401 has released the lease, though its role still reads leader
  feedGauge(registers, feeds, 'intake_sync_leader', '1 while this process holds the feed lease and consumes', (snap) => {
    const { role, fatalReason } = snap;
    return role === 'leader' && fatalReason === null ? 1 : 0;
  });
  feedGauge(registers, feeds, 'intake_sync_standby', '1 while this process waits for the feed lease as standby', (snap) =>
    snap.role === 'standby' ? 1 : 0,
  );
  feedGauge(
    registers,
    feeds,
    'intake_sync_last_success_timestamp_seconds',
    'Unix time of the last committed page (0 before the first)',
    (snap) => seconds(snap.lastSuccessAt),
  );
  feedGauge(
    registers,
    feeds,
    'intake_sync_last_poll_timestamp_seconds',
    "Unix time the last poll ended, successful or not: the poll loop's heartbeat (0 before the first)",
    (snap) => seconds(snap.lastPollAt),
  );
  feedGauge(
    registers,
    feeds,
    'intake_sync_newest_event_timestamp_seconds',
    'occurred_at of the newest event applied since this process started, as Unix time (0 before the first)',
    (snap) => seconds(snap.newestOccurredAt),
  );
  feedGauge(
    registers,
    feeds,
    'intake_sync_lag_seconds',
    'While draining a backlog: seconds since the newest applied event occurred; 0 when caught up or standby',
    (snap) => feedLagSeconds(snap, clock.now()),
  );
  feedGauge(
    registers,
    feeds,
    'intake_sync_consecutive_failures',
    'Failed polls since the last success',
    (snap) => snap.consecutiveFailures,
  );
  feedGauge(
    registers,
    feeds,
    'intake_sync_checkpoint_age_seconds',
    'Seconds since the checkpoint last moved (0 before it is read)',
    (snap) => {
      const checkpoint = snap.checkpoint;
      return checkpoint ? Math.max(0, clock.now() - checkpoint.updatedAt) / 1000 : 0;
    },
  );
  feedGauge(
    registers,
    feeds,
    'intake_sync_checkpoint_version',
    'Checkpoint version this process last read or committed (each committed page adds 1)',
    (snap) => snap.checkpoint?.version ?? 0,
  );
  feedGauge(registers, feeds, 'intake_sync_backlog', '1 while draining a backlog (the last page said done=false)', (snap) =>
    snap.backlog ? 1 : 0,
  );
  feedGauge(
    registers,
    feeds,
    'intake_sync_no_progress_streak',
    'Consecutive pages that came back at the same iterator with nothing new',
    (snap) => snap.noProgressStreak,
  );
  feedGauge(
    registers,
    feeds,
    'intake_sync_consuming_stopped',
    '1 once consuming stopped for good (the operator refused the credentials: 401)',
    (snap) => (snap.fatalReason === null ? 0 : 1),
  );
  new Gauge({
    name: 'intake_sync_feed_source_info',
    help: "The feed's operator sources recorded by an API version migration, by version and state (current, draining, retired); none for a feed that never migrated",
    labelNames: ['feed', 'api_version', 'state'],
    registers,
    collect() {
      // reset first: a retired source's draining series must not linger at 1
      this.reset();
      for (const { feed, state } of feeds)
        for (const source of state.snapshot().sources) this.set({ feed, api_version: source.apiVersion, state: source.state }, 1);
    },
  });
  feedGauge(
    registers,
    feeds,
    'intake_sync_poll_interval_seconds',
    'POLL_INTERVAL_MS: how often a caught-up leader polls',
    () => options.pollIntervalMs / 1000,
  );
  feedGauge(
    registers,
    feeds,
    'intake_sync_ready_max_poll_age_seconds',
    "READY_MAX_POLL_AGE_MS: /readyz fails when the leader's last successful poll is older; the stall alerts use the same limit",
    () => options.readyMaxPollAgeMs / 1000,
  );
}

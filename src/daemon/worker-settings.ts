import type { Config } from '../config/config.js';
import type { FeedConfig } from '../config/feeds-file.js';
import type { WorkerSettings } from '../sync/compose-worker.js';
import type { RetentionSettings } from '../sync/retention/cleaner.js';
import type { BatchSettings } from '../sync/retention/purge-pass.js';
import type { RetentionPolicy } from '../sync/retention/retention-classes.js';
import { STATISTICS_DEFAULTS } from '../sync/statistics/statistics-keeper.js';
import { pollPhaseMs } from '../sync/poll/poll-phase.js';

/** The worker's settings as the environment configures them, for `feed` (default FEED_NAME). */
export function workerSettingsFrom(config: Config, feed: string = config.FEED_NAME, retain?: FeedConfig['retain']): WorkerSettings {
  return {
    feed,
    pageLimit: config.PAGE_LIMIT,
    pollIntervalMs: config.POLL_INTERVAL_MS,
    // caught-up feeds poll spread over the interval, each at its own slot, not in step after a common start
    pollPhaseMs: pollPhaseMs(feed, config.POLL_INTERVAL_MS),
    pollBackoffMaxMs: config.POLL_BACKOFF_MAX_MS,
    leaseRetryMs: config.LEASE_RETRY_MS,
    leaseTtlMs: config.LEASE_TTL_MS,
    drainMaxFailures: config.ONCE_MAX_FAILURES,
    // 40% of the grace period: the rest covers releasing the lease (<= 2 s + 1 s) and closing connections
    stopWaitMs: Math.floor(config.SHUTDOWN_GRACE_MS * 0.4),
    ...(config.FEED_RETENTION_MS === undefined ? {} : { retentionMs: config.FEED_RETENTION_MS }),
    retention: retentionSettingsFrom(config, retain),
    statistics: STATISTICS_DEFAULTS,
  };
}

/** RETAIN_*, with the feed's own FEEDS_FILE `retain` values over them. */
export function retentionPolicyFrom(config: Config, retain: FeedConfig['retain'] = {}): RetentionPolicy {
  const pick = (cls: keyof RetentionPolicy, fallback: number | null) => (retain[cls] !== undefined ? (retain[cls] ?? null) : fallback);
  return {
    open_findings: pick('open_findings', config.RETAIN_OPEN_FINDINGS),
    quarantine: pick('quarantine', config.RETAIN_QUARANTINE),
    event_bodies: pick('event_bodies', config.RETAIN_EVENT_BODIES),
    events: pick('events', config.RETAIN_EVENTS),
    outbox_bodies: pick('outbox_bodies', config.RETAIN_OUTBOX_BODIES),
    terminal_identities: pick('terminal_identities', config.RETAIN_TERMINAL_IDENTITIES),
    status_changes: pick('status_changes', config.RETAIN_STATUS_CHANGES),
    audit: pick('audit', config.RETAIN_AUDIT),
  };
}

/**
 * The cleaner's batches: start at 500 rows, grow to 5,000 while nobody waits, halve on contention;
 * each batch's lock and statement timeout is 500 ms, so a page apply that replays a row being purged
 * waits at most that long.
 */
export const RETENTION_BATCH: Omit<BatchSettings, 'detectWaiters'> = {
  initialRows: 500,
  timeoutMs: 500,
  limits: { minRows: 10, maxRows: 5_000, pauseMs: 50, backoffMs: 1_000, maxBackoffMs: 60_000 },
};

export function retentionSettingsFrom(config: Config, retain?: FeedConfig['retain']): RetentionSettings {
  return {
    policy: retentionPolicyFrom(config, retain),
    unscopedAuditMs: config.RETAIN_AUDIT,
    intervalMs: config.RETENTION_INTERVAL,
    // advisory waits are visible only on a server (the embedded store has one session)
    batch: { ...RETENTION_BATCH, detectWaiters: config.DATABASE_URL !== undefined },
  };
}

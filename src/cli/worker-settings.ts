import type { Config } from '../config.js';
import type { WorkerSettings } from '../sync/compose-worker.js';

/** The worker's settings as the environment configures them, for `feed` (default FEED_NAME). */
export function workerSettingsFrom(config: Config, feed: string = config.FEED_NAME): WorkerSettings {
  return {
    feed,
    pageLimit: config.PAGE_LIMIT,
    pollIntervalMs: config.POLL_INTERVAL_MS,
    pollBackoffMaxMs: config.POLL_BACKOFF_MAX_MS,
    leaseRetryMs: config.LEASE_RETRY_MS,
    leaseTtlMs: config.LEASE_TTL_MS,
    drainMaxFailures: config.ONCE_MAX_FAILURES,
    // 40% of the grace period: the rest covers releasing the lease (<= 2 s + 1 s) and closing connections
    stopWaitMs: Math.floor(config.SHUTDOWN_GRACE_MS * 0.4),
    ...(config.FEED_RETENTION_MS === undefined ? {} : { retentionMs: config.FEED_RETENTION_MS }),
  };
}

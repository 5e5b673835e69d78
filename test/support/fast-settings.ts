import type { WorkerSettings } from '../../src/sync/compose-worker.js';

/**
 * A worker's settings for in-process tests: fast polls and backoff, a long lease. Tests wait on
 * observable state, never on these timings; give only what a test is about (`pageLimit`, `feed`).
 */
export function fastWorkerSettings(overrides: Partial<WorkerSettings> = {}): WorkerSettings {
  return {
    feed: 'default',
    pageLimit: 3,
    pollIntervalMs: 20,
    pollBackoffMaxMs: 200,
    leaseRetryMs: 100,
    leaseTtlMs: 10_000,
    drainMaxFailures: 3,
    stopWaitMs: 5_000,
    ...overrides,
  };
}

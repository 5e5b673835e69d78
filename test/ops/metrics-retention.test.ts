import { describe, expect, test } from 'vitest';
import { createSyncMetrics } from '../../src/ops/metrics.js';
import { WorkerState } from '../../src/sync/state/worker-state.js';

describe('retention metrics', () => {
  test('rows purged by class, the last pass and the interval per feed, and each table size, read at scrape time', async () => {
    const state = new WorkerState({ now: () => 0 });
    let sizes: Record<string, number> = { events: 8192, outbox: 16384 };
    const metrics = createSyncMetrics(
      state,
      { now: () => 0 },
      {
        feed: 'main',
        pollIntervalMs: 5_000,
        readyMaxPollAgeMs: 60_000,
        retention: async () => 1_750_000_000,
        retentionIntervalMs: 3_600_000,
        tableSizes: async () => sizes,
      },
    );
    state.retentionPurged('event_bodies', 120);
    state.retentionPurged('event_bodies', 30);
    state.retentionPurged('status_changes', 7);
    const text = await metrics.registry.metrics();
    expect(text).toContain('intake_sync_retention_purged_total{feed="main",class="event_bodies"} 150');
    expect(text).toContain('intake_sync_retention_purged_total{feed="main",class="status_changes"} 7');
    expect(text).toContain('intake_sync_retention_purged_total{feed="main",class="audit"} 0');
    expect(text).toContain('intake_sync_retention_last_run_timestamp_seconds{feed="main"} 1750000000');
    expect(text).toContain('intake_sync_retention_interval_seconds{feed="main"} 3600');
    expect(text).toContain('intake_sync_table_size_bytes{table="events"} 8192');
    sizes = { events: 24576, outbox: 16384 };
    expect(await metrics.registry.metrics()).toContain('intake_sync_table_size_bytes{table="events"} 24576');
    metrics.close();
    // detached: no more counting
    state.retentionPurged('events', 5);
  });

  test('no pass recorded yet: the last run reads as this process start, so a new deployment is not overdue', async () => {
    const metrics = createSyncMetrics(
      new WorkerState({ now: () => 0 }),
      { now: () => 0 },
      { feed: 'main', pollIntervalMs: 5_000, readyMaxPollAgeMs: 60_000, retention: async () => 0, retentionIntervalMs: 3_600_000 },
    );
    const text = await metrics.registry.metrics();
    const value = Number(/intake_sync_retention_last_run_timestamp_seconds\{feed="main"\} (\d+)/.exec(text)?.[1]);
    expect(value).toBe(Math.floor(performance.timeOrigin / 1000));
    expect(value).toBeGreaterThan(0);
    metrics.close();
  });

  test('without sources the series exist at 0 (rules and dashboards always parse)', async () => {
    const metrics = createSyncMetrics(
      new WorkerState({ now: () => 0 }),
      { now: () => 0 },
      { feed: 'main', pollIntervalMs: 5_000, readyMaxPollAgeMs: 60_000 },
    );
    const text = await metrics.registry.metrics();
    expect(text).toContain('intake_sync_retention_last_run_timestamp_seconds{feed="main"} 0');
    expect(text).toContain('intake_sync_retention_purged_total{feed="main",class="open_findings"} 0');
    metrics.close();
  });
});

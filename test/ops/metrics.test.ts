import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { NetworkError } from '../../src/intake/errors/network-error.js';
import { RequestTimeoutError } from '../../src/intake/errors/request-timeout-error.js';
import { UnauthorizedError } from '../../src/intake/errors/unauthorized-error.js';
import { UpstreamError } from '../../src/intake/errors/upstream-error.js';
import { createFeedsMetrics, createSyncMetrics, type SyncMetricsOptions } from '../../src/ops/metrics.js';
import { upstreamFailureReason } from '../../src/sync/state/failure-reason.js';
import { feedLagSeconds } from '../../src/sync/state/feed-lag.js';
import { preparePage } from '../../src/sync/apply/prepare-page.js';
import { event } from '../support/sync/fixtures.js';
import { WorkerState } from '../../src/sync/state/worker-state.js';
import type { AppliedPageRecord } from '../../src/sync/state/worker-snapshot.js';

const context = { method: 'GET', path: '/events' };
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

function page(overrides: Partial<AppliedPageRecord> = {}): AppliedPageRecord {
  return {
    received: 2,
    inserted: 2,
    duplicates: 0,
    statusChanges: 1,
    matched: 1,
    quarantined: { malformed: 0, unmatched: 1, ambiguous: 0, unsupported_version: 0 },
    durationMs: 12,
    done: false,
    ...overrides,
  };
}

/** value of one series in the exposition text, exact labels */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function setup(extra: Partial<SyncMetricsOptions> = {}) {
  let now = T0;
  const clock = { now: () => now };
  const state = new WorkerState(clock);
  const metrics = createSyncMetrics(state, clock, { feed: 'main', pollIntervalMs: 5_000, readyMaxPollAgeMs: 60_000, ...extra });
  return {
    state,
    metrics,
    advance: (ms: number) => (now += ms),
    text: () => metrics.registry.metrics(),
  };
}

describe('upstreamFailureReason', () => {
  it.each([
    [new UnauthorizedError(context, undefined), 'unauthorized'],
    [new UpstreamError(context, 429, 1000), 'rate_limited'],
    [new UpstreamError(context, 503, undefined), 'server_error'],
    [new RequestTimeoutError(context, 100), 'timeout'],
    [new NetworkError(context, 'ECONNRESET'), 'network'],
    [new Error('something else with a patient name in it'), 'other'],
    ['not an error', 'other'],
  ])('%s -> %s', (error, reason) => {
    expect(upstreamFailureReason(error)).toBe(reason);
  });
});

describe('feedLagSeconds', () => {
  it.each([
    { name: 'leader draining a backlog', inputs: { role: 'leader', backlog: true, newestOccurredAt: T0 - 90_000 }, lag: 90 },
    { name: 'leader caught up', inputs: { role: 'leader', backlog: false, newestOccurredAt: T0 - 90_000 }, lag: 0 },
    { name: 'standby', inputs: { role: 'standby', backlog: true, newestOccurredAt: T0 - 90_000 }, lag: 0 },
    { name: 'no event yet', inputs: { role: 'leader', backlog: true, newestOccurredAt: null }, lag: 0 },
    { name: 'event from the future', inputs: { role: 'leader', backlog: true, newestOccurredAt: T0 + 5_000 }, lag: 0 },
  ])('$name', ({ inputs, lag }) => {
    expect(feedLagSeconds(inputs, T0)).toBe(lag);
  });

  it('preparePage finds the newest occurred_at of the well-formed events (zone-less read as UTC, malformed ignored)', () => {
    const page = preparePage([
      event('a', 'ordered', '2026-01-01T00:00:01.000Z'),
      event('b', 'ordered', '2026-01-01T00:00:03'),
      event('c', 'ordered', 'garbage'),
      event('d', 'ordered', '2026-01-01T00:00:02Z'),
    ]);
    expect(page.events.map((e) => e.id)).toEqual(['a', 'b', 'd']);
    expect(page.newestOccurredAt).toBe(T0 + 3_000);
    expect(preparePage([]).newestOccurredAt).toBeUndefined();
  });
});

describe('createSyncMetrics', () => {
  it('creates every labelled series at 0 before anything happened, all with the feed label', async () => {
    const { text } = setup();
    const body = await text();
    for (const series of [
      'intake_sync_leader{feed="main"} 0',
      'intake_sync_standby{feed="main"} 0',
      'intake_sync_lease_acquisitions_total{feed="main"} 0',
      'intake_sync_upstream_failures_total{feed="main",reason="unauthorized"} 0',
      'intake_sync_upstream_failures_total{feed="main",reason="server_error"} 0',
      'intake_sync_upstream_retries_total{feed="main",reason="rate_limited"} 0',
      'intake_sync_poll_failures_total{feed="main",source="database"} 0',
      'intake_sync_quarantine_open{feed="main",reason="ambiguous"} 0',
      'intake_sync_outbox_pending{feed="main"} 0',
      'intake_sync_outbox_oldest_pending_age_seconds{feed="main"} 0',
      'intake_sync_poll_interval_seconds{feed="main"} 5',
      'intake_sync_ready_max_poll_age_seconds{feed="main"} 60',
      'intake_sync_consuming_stopped{feed="main"} 0',
    ]) {
      expect(body).toContain(series);
    }
    // no intake_sync_ series without the feed label
    const unlabelled = body.split('\n').filter((l) => l.startsWith('intake_sync_') && !l.includes('feed="main"'));
    expect(unlabelled).toEqual([]);
  });

  it('follows the state: role, lease acquisitions, heartbeat, newest event, lag, failures by reason', async () => {
    const { state, advance, text } = setup();
    state.becameLeader();
    state.pageApplied(page({ newestOccurredAt: T0 - 600_000 }), { iterator: 'a', version: 1 }, false);
    advance(30_000);
    let body = await text();
    expect(value(body, 'intake_sync_leader{feed="main"}')).toBe(1);
    expect(value(body, 'intake_sync_lease_acquisitions_total{feed="main"}')).toBe(1);
    expect(value(body, 'intake_sync_last_success_timestamp_seconds{feed="main"}')).toBe(T0 / 1000);
    expect(value(body, 'intake_sync_newest_event_timestamp_seconds{feed="main"}')).toBe((T0 - 600_000) / 1000);
    // backlog: the lag grows with the clock while nothing is applied
    expect(value(body, 'intake_sync_lag_seconds{feed="main"}')).toBe(630);
    expect(value(body, 'intake_sync_events_quarantined_total{feed="main",reason="unmatched"}')).toBe(1);

    state.upstreamRetry('rate_limited');
    state.pollFailed('upstream', 'UpstreamError: GET /events: 503 from the operator', 'server_error');
    state.pollFailed('database', 'PostgresError (code 57P01)');
    body = await text();
    expect(value(body, 'intake_sync_upstream_retries_total{feed="main",reason="rate_limited"}')).toBe(1);
    expect(value(body, 'intake_sync_upstream_failures_total{feed="main",reason="rate_limited"}')).toBe(1);
    expect(value(body, 'intake_sync_upstream_failures_total{feed="main",reason="server_error"}')).toBe(1);
    expect(value(body, 'intake_sync_poll_failures_total{feed="main",source="upstream"}')).toBe(1);
    expect(value(body, 'intake_sync_poll_failures_total{feed="main",source="database"}')).toBe(1);
    // the heartbeat moved with the failed polls, the last success did not
    expect(value(body, 'intake_sync_last_poll_timestamp_seconds{feed="main"}')).toBe((T0 + 30_000) / 1000);
    expect(value(body, 'intake_sync_last_success_timestamp_seconds{feed="main"}')).toBe(T0 / 1000);

    // caught up: lag 0; an older page (replay) does not move the newest event back
    state.pageApplied(page({ done: true, newestOccurredAt: T0 - 900_000 }), { iterator: 'b', version: 2 }, false);
    body = await text();
    expect(value(body, 'intake_sync_lag_seconds{feed="main"}')).toBe(0);
    expect(value(body, 'intake_sync_newest_event_timestamp_seconds{feed="main"}')).toBe((T0 - 600_000) / 1000);

    state.becameStandby();
    state.becameLeader();
    state.fatal('UnauthorizedError: GET /events: 401');
    body = await text();
    expect(value(body, 'intake_sync_lease_acquisitions_total{feed="main"}')).toBe(2);
    expect(value(body, 'intake_sync_consuming_stopped{feed="main"}')).toBe(1);
    expect(value(body, 'intake_sync_upstream_failures_total{feed="main",reason="unauthorized"}')).toBe(1);
  });

  it('reads the outbox and quarantine sources at scrape time; a failing source keeps the last value and is counted', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    let outbox: { pending: number; oldestAgeSeconds: number } | Error = { pending: 7, oldestAgeSeconds: 42 };
    let reads = 0;
    const { text } = setup({
      outbox: async () => {
        reads += 1;
        if (outbox instanceof Error) throw outbox;
        return outbox;
      },
      quarantine: async () => ({ malformed: 1, unmatched: 2, ambiguous: 3, unsupported_version: 0 }),
    });
    let body = await text();
    expect(value(body, 'intake_sync_outbox_pending{feed="main"}')).toBe(7);
    expect(value(body, 'intake_sync_outbox_oldest_pending_age_seconds{feed="main"}')).toBe(42);
    expect(value(body, 'intake_sync_quarantine_open{feed="main",reason="unmatched"}')).toBe(2);
    // one read serves both outbox gauges
    expect(reads).toBe(1);
    outbox = new Error('database away');
    // one read serves one scrape's two gauges for 250 ms; the next scrape reads again
    await vi.advanceTimersByTimeAsync(250);
    body = await text();
    expect(value(body, 'intake_sync_outbox_pending{feed="main"}')).toBe(7);
    expect(value(body, 'intake_sync_metrics_source_errors_total{feed="main",source="outbox"}')).toBe(1);
  });
});

describe('several feeds on one registry', () => {
  it("each series once per feed; one feed's 401 and pages show under its own label only", async () => {
    const clock = { now: () => T0 };
    const west = new WorkerState(clock);
    const east = new WorkerState(clock);
    const metrics = createFeedsMetrics(
      [
        {
          feed: 'west',
          state: west,
          quarantine: async () => ({ malformed: 0, unmatched: 2, ambiguous: 0, unsupported_version: 0 }),
          outbox: async () => ({ pending: 3, oldestAgeSeconds: 7 }),
        },
        {
          feed: 'east',
          state: east,
          quarantine: async () => ({ malformed: 1, unmatched: 0, ambiguous: 0, unsupported_version: 0 }),
          outbox: async () => ({ pending: 0, oldestAgeSeconds: 0 }),
        },
      ],
      clock,
      { pollIntervalMs: 5_000, readyMaxPollAgeMs: 60_000 },
    );
    west.becameLeader();
    east.becameLeader();
    west.pageApplied(page({ inserted: 4 }), { iterator: 'a', version: 1 }, false);
    east.fatal('UnauthorizedError: GET /events: 401');
    const text = await metrics.registry.metrics();
    expect(value(text, 'intake_sync_pages_total{feed="west"}')).toBe(1);
    expect(value(text, 'intake_sync_pages_total{feed="east"}')).toBe(0);
    expect(value(text, 'intake_sync_events_applied_total{feed="west"}')).toBe(4);
    expect(value(text, 'intake_sync_consuming_stopped{feed="west"}')).toBe(0);
    expect(value(text, 'intake_sync_consuming_stopped{feed="east"}')).toBe(1);
    expect(value(text, 'intake_sync_upstream_failures_total{feed="east",reason="unauthorized"}')).toBe(1);
    expect(value(text, 'intake_sync_upstream_failures_total{feed="west",reason="unauthorized"}')).toBe(0);
    expect(value(text, 'intake_sync_leader{feed="west"}')).toBe(1);
    expect(value(text, 'intake_sync_leader{feed="east"}')).toBe(0);
    expect(value(text, 'intake_sync_quarantine_open{feed="west",reason="unmatched"}')).toBe(2);
    expect(value(text, 'intake_sync_quarantine_open{feed="east",reason="malformed"}')).toBe(1);
    expect(value(text, 'intake_sync_outbox_pending{feed="west"}')).toBe(3);
    expect(value(text, 'intake_sync_outbox_pending{feed="east"}')).toBe(0);
    expect(value(text, 'intake_sync_feed_cursor_expired{feed="east"}')).toBe(0);
    // one HELP/TYPE per metric, whatever the number of feeds
    expect(text.split('\n').filter((l) => l === '# TYPE intake_sync_pages_total counter')).toHaveLength(1);
    metrics.close();
  });
});

import { qualified, type RunnerSource, runnerOf } from '../runner.js';

/** A row of feed_overview (sql/api/feeds/feed_overview.sql): one per feed the role may see. */
export interface FeedOverviewRow {
  feed: string;
  origin: string | null;
  position_moved_at: Date;
  events_applied: string;
  last_event_received_at: Date | null;
  last_event_occurred_at: Date | null;
  /** open findings by reason, each counted up to 1,001 (feed_overview.open_findings_capped): 1,001 is "more than 1,000" */
  open_findings_capped: Record<string, number>;
  outbox_pending: string;
  outbox_failed: string;
  leader_since: Date | null;
  leader_heartbeat_at: Date | null;
  leader_expires_at: Date | null;
  stopped_at: Date | null;
  stop_reason: string | null;
  stop_command: string | null;
  // `feeds pause` and a FEEDS_FILE reload's removal (0027)
  paused_at?: Date | null;
  pause_reason?: string | null;
  retired_at?: Date | null;
  /** judged by the database's clock and the holder's backend (feed_overview), as the daemon judges it */
  leader_alive: boolean | null;
  leader_heartbeat_age_s: number | null;
  leader_lapsed_s: number | null;
  source_api_version: string | null;
  pages_applied: string;
}

/** The columns the Feeds page reads (feedOverview says why they are named). */
const COLUMNS: readonly (keyof FeedOverviewRow)[] = [
  'feed',
  'origin',
  'position_moved_at',
  'events_applied',
  'last_event_received_at',
  'last_event_occurred_at',
  'open_findings_capped',
  'outbox_pending',
  'outbox_failed',
  'leader_since',
  'leader_heartbeat_at',
  'leader_expires_at',
  'stopped_at',
  'stop_reason',
  'stop_command',
  'paused_at',
  'pause_reason',
  'retired_at',
  'leader_alive',
  'leader_heartbeat_age_s',
  'leader_lapsed_s',
  'source_api_version',
  'pages_applied',
];

/**
 * Every feed the role may see, by name. The columns are named: PostgreSQL computes only the view's
 * columns a query reads, and open_findings (every open finding of the feed counted, 50,505 a feed at
 * bench:console's size) cost most of the Feeds page (issue 34 §6); open_findings_capped stops at 1,001.
 */
export async function feedOverview(source: RunnerSource): Promise<FeedOverviewRow[]> {
  const runner = runnerOf(source);
  return runner.query<FeedOverviewRow>(`select ${COLUMNS.join(', ')} from ${qualified(runner, 'feed_overview')} order by feed`);
}

/** The names of the feeds the role may see (what the Feeds page lists), in order. */
export async function visibleFeedNames(source: RunnerSource): Promise<string[]> {
  const runner = runnerOf(source);
  return (await runner.query<{ feed: string }>(`select feed from ${qualified(runner, 'feed_overview')} order by feed`)).map((r) => r.feed);
}

/** Events applied per hour of the last day, per feed the role may see (feed_activity). */
export async function feedActivity(source: RunnerSource): Promise<{ feed: string; hour: Date; events: number }[]> {
  const runner = runnerOf(source);
  const rows = await runner.query<{ feed: string; hour: Date; events: string }>(
    `select feed, hour, events from ${qualified(runner, 'feed_activity')}`,
  );
  return rows.map((r) => ({ feed: r.feed, hour: r.hour, events: Number(r.events) }));
}

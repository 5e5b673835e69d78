import { qualified, type RunnerSource, runnerOf } from '../runner.js';

/** A row of feed_overview (sql/api/feeds/feed_overview.sql): one per feed the role may see. */
export interface FeedOverviewRow {
  feed: string;
  origin: string | null;
  position_moved_at: Date;
  events_applied: string;
  last_event_received_at: Date | null;
  last_event_occurred_at: Date | null;
  open_findings: Record<string, number>;
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

/** Every feed the role may see, by name. */
export async function feedOverview(source: RunnerSource): Promise<FeedOverviewRow[]> {
  const runner = runnerOf(source);
  return runner.query<FeedOverviewRow>(`select * from ${qualified(runner, 'feed_overview')} order by feed`);
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

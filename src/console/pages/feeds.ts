import type { Context } from 'hono';
import { activityChart, hourlyBuckets } from '../activity-chart.js';
import { asUser, type ConsoleDeps, type ConsoleEnv } from '../context.js';
import { formatAge, formatCapped, formatTime } from '../format.js';
import { html, queryString } from '../html.js';
import { layout } from '../layout.js';
import { COUNTED_AT_MOST, overdueCell, overdueCounts } from './overdue.js';
import { feedActivity, feedOverview, type FeedOverviewRow } from '../../store-api/feeds/feed-overview.js';

type FeedRow = FeedOverviewRow;

type Lease = Pick<FeedRow, 'leader_since' | 'leader_alive' | 'leader_heartbeat_age_s' | 'leader_lapsed_s' | 'leader_expires_at'>;

/**
 * Pure: what the feed's lease says of its worker, as the database judged it (feed_overview: the
 * lease unexpired and its holder's backend alive, ages by the database's clock; the console's own
 * clock plays no part). A live lease: a worker leads it (since when, its last heartbeat).
 */
export function leaderText(f: Lease): string {
  // no lease row: none taken yet, or its last leader gave it up (a worker releases the lease when it stops or exits)
  if (!f.leader_expires_at) return 'no worker leads it (no lease: none taken yet, or its last leader gave it up)';
  const seconds = (s: number | null) => formatAge(s === null ? null : s * 1000);
  if (f.leader_alive !== true) {
    if ((f.leader_lapsed_s ?? 0) <= 0) {
      return "no worker leads it: the lease's holder has gone (its database session ended), the lease is free (see the worker's /readyz and logs)";
    }
    return `no worker leads it: the last lease lapsed ${seconds(f.leader_lapsed_s)} ago (see the worker's /readyz and logs)`;
  }
  return `a worker leads it since ${formatTime(f.leader_since)}; heartbeat ${seconds(f.leader_heartbeat_age_s)} ago`;
}

/**
 * Pure: the feed's state. Stopped, with the worker's reason (its /readyz line, feed_stops) and the
 * command that fixes it; else running while a worker leads it; else no worker runs it.
 */
export function feedState(f: FeedRow) {
  if (f.retired_at)
    return html`retired since ${formatTime(f.retired_at)}<br><small>removed from FEEDS_FILE; its data stays under retention</small>`;
  if (f.pause_reason)
    return html`<strong>paused</strong> since ${formatTime(f.paused_at ?? null)}: ${f.pause_reason}<br><small>${leaderText(f)}</small>`;
  if (f.stop_reason !== null) {
    return html`<strong class="stopped">stopped</strong> since ${formatTime(f.stopped_at)}: ${f.stop_reason}
      ${f.stop_command === null ? '' : html`<br>Fix: <code>${f.stop_command}</code>`}<br><small>${leaderText(f)}</small>`;
  }
  return html`${f.leader_alive === true ? 'running' : 'not running'}<br><small>${leaderText(f)}</small>`;
}

/**
 * Pure: where the feed's events come from and whether any page was applied. `origin` says whose feed
 * it is (claimed by a worker's start; null after migrate or a checkpoint reset until the next start),
 * never whether it was polled: "not yet polled" next to a live heartbeat came from reading it so.
 */
export function sourceText(f: Pick<FeedRow, 'origin' | 'source_api_version' | 'pages_applied'>): string {
  const who =
    f.origin === 'operator'
      ? "the operator's API"
      : f.origin === 'simulator'
        ? 'the built-in simulator'
        : 'origin not recorded yet (registered or reset; a worker start records it)';
  const version = f.source_api_version ? `, API version ${f.source_api_version}` : '';
  const pages = Number(f.pages_applied);
  return `${who}${version}; ${pages === 0 ? 'no page applied yet' : `${pages} page${pages === 1 ? '' : 's'} applied`}`;
}

/** GET /: a row per feed the role can see (feed_overview), with 24 h of activity. */
export async function feedsPage(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const session = c.get('session');
  const api = asUser(c, deps);
  const feeds = await feedOverview(api);
  const activity = await feedActivity(api);
  const overdue = await overdueCounts(c, deps);
  const now = deps.now();
  const rows = feeds.map((f) => {
    const buckets = hourlyBuckets(
      activity.filter((a) => a.feed === f.feed).map((a) => ({ hour: a.hour, events: a.events })),
      now,
    );
    const findings = Object.entries(f.open_findings_capped).sort(([a], [b]) => a.localeCompare(b));
    const lag = f.last_event_occurred_at ? now - f.last_event_occurred_at.getTime() : null;
    return html`<section class="feed" aria-labelledby="feed-${f.feed}"><h2 id="feed-${f.feed}">${f.feed}</h2>
      <dl class="feed-facts">
      <dt>State</dt><dd>${feedState(f)}</dd>
      <dt>Source</dt><dd>${sourceText(f)}</dd>
      <dt>Last event received</dt><dd>${formatTime(f.last_event_received_at)}<br><small>position moved ${formatTime(f.position_moved_at)}</small></dd>
      <dt>Age of newest applied event</dt><dd>${formatAge(lag)}</dd>
      <dt>Events applied</dt><dd>${f.events_applied}</dd>
      <dt>Open findings</dt><dd>${findings.length === 0 ? 'none' : findings.map(([reason, n]) => html`<a href="/quarantine${queryString({ feed: f.feed, reason })}">${reason}: ${formatCapped(n, COUNTED_AT_MOST)}</a><br>`)}</dd>
      <dt>Overdue</dt><dd>${overdueCell(f.feed, overdue.get(f.feed))}</dd>
      <dt>Outbox</dt><dd>${f.outbox_pending} pending / ${f.outbox_failed} failed</dd>
      </dl>
      <div class="feed-chart"><h3>Events per hour, last 24 h</h3>${activityChart(buckets, `Feed ${f.feed}`, now)}</div></section>`;
  });
  const body = html`<p>Every feed your role may see, from the database: whether a worker runs it (its lease, judged by the
  database's clock), why it stopped and the command that fixes it (the worker's <code>/readyz</code> line), its position and what waits.</p>
  ${rows.length === 0 ? html`<p>Your role sees no feed.</p>` : rows}`;
  return c.html(layout({ title: 'Feeds', session, current: '/', flash: takeFlash(session), body }).text);
}

/** The session's one-time message, removed as it is shown. */
export function takeFlash(session: { flash?: string | undefined }): string | undefined {
  const flash = session.flash;
  session.flash = undefined;
  return flash;
}

import type { Context } from 'hono';
import { activityChart, hourlyBuckets } from '../activity-chart.js';
import { type ConsoleDeps, type ConsoleEnv, schemaOf } from '../context.js';
import { formatAge, formatTime } from '../format.js';
import { html, queryString } from '../html.js';
import { layout } from '../layout.js';
import { overdueCell, overdueCounts } from './overdue.js';

interface FeedRow {
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
}

/**
 * Pure: what the feed's lease says of its worker at `now`. A live lease: a worker leads it (since
 * when, its last heartbeat); none or an expired one: no worker runs the feed.
 */
export function leaderText(f: Pick<FeedRow, 'leader_since' | 'leader_heartbeat_at' | 'leader_expires_at'>, now: number): string {
  // no lease row: none taken yet, or its last leader gave it up (a worker releases the lease when it stops or exits)
  if (!f.leader_expires_at) return 'no worker leads it (no lease: none taken yet, or its last leader gave it up)';
  if (f.leader_expires_at.getTime() <= now) {
    return `no worker leads it: the last lease lapsed ${formatAge(now - f.leader_expires_at.getTime())} ago (see the worker's /readyz and logs)`;
  }
  return `a worker leads it since ${formatTime(f.leader_since)}; heartbeat ${formatAge(now - (f.leader_heartbeat_at?.getTime() ?? now))} ago`;
}

/**
 * Pure: the feed's state. Stopped, with the worker's reason (its /readyz line, feed_stops) and the
 * command that fixes it; else running while a worker leads it; else no worker runs it.
 */
export function feedState(f: FeedRow, now: number) {
  if (f.retired_at)
    return html`retired since ${formatTime(f.retired_at)}<br><small>removed from FEEDS_FILE; its data stays under retention</small>`;
  if (f.pause_reason)
    return html`<strong>paused</strong> since ${formatTime(f.paused_at ?? null)}: ${f.pause_reason}<br><small>${leaderText(f, now)}</small>`;
  if (f.stop_reason !== null) {
    return html`<strong class="stopped">stopped</strong> since ${formatTime(f.stopped_at)}: ${f.stop_reason}
      ${f.stop_command === null ? '' : html`<br>Fix: <code>${f.stop_command}</code>`}<br><small>${leaderText(f, now)}</small>`;
  }
  const leading = f.leader_expires_at !== null && f.leader_expires_at.getTime() > now;
  return html`${leading ? 'running' : 'not running'}<br><small>${leaderText(f, now)}</small>`;
}

/** GET /: a row per feed the role can see (feed_overview), with 24 h of activity. */
export async function feedsPage(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const session = c.get('session');
  const schema = schemaOf(deps);
  const feeds = await session.sql.unsafe<FeedRow[]>(`select * from ${schema}.feed_overview order by feed`);
  const activity = await session.sql.unsafe<{ feed: string; hour: Date; events: string }[]>(
    `select feed, hour, events from ${schema}.feed_activity`,
  );
  const overdue = await overdueCounts(c, deps);
  const now = deps.now();
  const rows = feeds.map((f) => {
    const buckets = hourlyBuckets(
      activity.filter((a) => a.feed === f.feed).map((a) => ({ hour: a.hour, events: Number(a.events) })),
      now,
    );
    const findings = Object.entries(f.open_findings).sort(([a], [b]) => a.localeCompare(b));
    const lag = f.last_event_occurred_at ? now - f.last_event_occurred_at.getTime() : null;
    return html`<tr>
      <th scope="row">${f.feed}</th>
      <td>${feedState(f, now)}</td>
      <td>${f.origin ?? 'not yet polled'}</td>
      <td>${formatTime(f.last_event_received_at)}<br><small>position moved ${formatTime(f.position_moved_at)}</small></td>
      <td>${formatAge(lag)}</td>
      <td>${f.events_applied}</td>
      <td>${findings.length === 0 ? 'none' : findings.map(([reason, n]) => html`<a href="/quarantine${queryString({ feed: f.feed, reason })}">${reason}: ${n}</a><br>`)}</td>
      <td>${overdueCell(f.feed, overdue.get(f.feed))}</td>
      <td>${f.outbox_pending} pending / ${f.outbox_failed} failed</td>
      <td>${activityChart(buckets, `Feed ${f.feed}`)}</td>
    </tr>`;
  });
  const body = html`<p>Every feed your role may see, from the database: whether a worker runs it (its lease),
  why it stopped and the command that fixes it (the worker's <code>/readyz</code> line), its position and what waits.</p>
  <table><thead><tr><th scope="col">Feed</th><th scope="col">State</th><th scope="col">Source</th><th scope="col">Last event received</th>
  <th scope="col">Age of newest applied event</th><th scope="col">Events applied</th><th scope="col">Open findings</th>
  <th scope="col">Overdue</th><th scope="col">Outbox</th><th scope="col">Events per hour, last 24 h</th></tr></thead>
  <tbody>${rows.length === 0 ? html`<tr><td colspan="10">Your role sees no feed.</td></tr>` : rows}</tbody></table>`;
  return c.html(layout({ title: 'Feeds', session, current: '/', flash: takeFlash(session), body }).text);
}

/** The session's one-time message, removed as it is shown. */
export function takeFlash(session: { flash?: string | undefined }): string | undefined {
  const flash = session.flash;
  session.flash = undefined;
  return flash;
}

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
  const body = html`<p>Every feed your role may see. The worker's own state (running, stopped and why) is on its
  <code>/readyz</code>; this page reads the database.</p>
  <table><thead><tr><th scope="col">Feed</th><th scope="col">Source</th><th scope="col">Last event received</th>
  <th scope="col">Age of newest applied event</th><th scope="col">Events applied</th><th scope="col">Open findings</th>
  <th scope="col">Overdue</th><th scope="col">Outbox</th><th scope="col">Events per hour, last 24 h</th></tr></thead>
  <tbody>${rows.length === 0 ? html`<tr><td colspan="9">Your role sees no feed.</td></tr>` : rows}</tbody></table>`;
  return c.html(layout({ title: 'Feeds', session, current: '/', flash: takeFlash(session), body }).text);
}

/** The session's one-time message, removed as it is shown. */
export function takeFlash(session: { flash?: string | undefined }): string | undefined {
  const flash = session.flash;
  session.flash = undefined;
  return flash;
}

import type { Context } from 'hono';
import { type ConsoleDeps, type ConsoleEnv, schemaOf } from '../context.js';
import { formatTime } from '../format.js';
import { html, queryString, type SafeHtml } from '../html.js';
import { findingHref } from '../links.js';
import { layout } from '../layout.js';
import {
  AGES,
  decodeCursor,
  encodeCursor,
  filterParams,
  parseQuarantineFilter,
  type QuarantineFilter,
  REASONS,
} from '../quarantine-filter.js';
import { takeFlash } from './feeds.js';

export const PAGE_SIZE = 50;

export interface FindingRow {
  feed: string;
  event_id: string | null;
  reason: string;
  event_name: string | null;
  held_since: Date;
  held_since_key: string;
  detail: string;
  seen_count: number;
  quarantine_key: string;
  subscription_id: string | null;
}

/** The filter form (GET: filters and search are identifiers, never patient data). */
export function filterForm(filter: QuarantineFilter, feeds: readonly string[]): SafeHtml {
  const option = (value: string, label: string, selected: string | undefined) =>
    html`<option value="${value}"${selected === value ? html` selected` : ''}>${label}</option>`;
  return html`<form method="get" action="/quarantine" class="filters" role="search">
    <label for="f-feed">Feed<select id="f-feed" name="feed">${option('', 'all', filter.feed)}${feeds.map((f) => option(f, f, filter.feed))}</select></label>
    <label for="f-reason">Finding reason<select id="f-reason" name="reason">${option('', 'all', filter.reason)}${REASONS.map((r) => option(r, r, filter.reason))}</select></label>
    <label for="f-event">Event name<input id="f-event" name="event_name" value="${filter.eventName ?? ''}" maxlength="64"></label>
    <label for="f-age">Held at least<select id="f-age" name="age">${option('', 'any time', filter.age)}${Object.keys(AGES).map((a) => option(a, a, filter.age))}</select></label>
    <label for="f-q">Search<input id="f-q" name="q" value="${filter.search ?? ''}" maxlength="512" size="36" placeholder="event id, subscription id or external_id"></label>
    <button type="submit">Apply</button>
  </form>`;
}

/**
 * Under a group's heading: how many of its findings this page shows and, for a subscription, the
 * link to all of them (the filter with the subscription as Search: one group, whatever page its
 * findings fell on, and Dismiss all matching then acts on that group alone).
 */
export function groupNote(filter: QuarantineFilter, findings: readonly FindingRow[], morePages: boolean): SafeHtml {
  const subscription = findings[0]?.subscription_id ?? null;
  const shown = `${findings.length} on this page`;
  if (subscription === null || filter.search === subscription) return html`<p class="group-note">${shown}.</p>`;
  const all = `/quarantine${queryString({ ...filterParams(filter), q: subscription, after: undefined })}`;
  return html`<p class="group-note">${shown}; <a href="${all}">every open finding of subscription ${subscription}</a>${morePages ? ' (it may continue on later pages)' : ''}.</p>`;
}

/** GET /quarantine: open findings of the visible feeds, filtered, grouped by subscription, keyset-paged. */
export async function quarantinePage(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const session = c.get('session');
  const schema = schemaOf(deps);
  const { filter, problems } = parseQuarantineFilter(c.req.query());
  const cursor = decodeCursor(c.req.query('after'));
  // quarantine_page filters, orders and pages inside (a query on the barrier view would read every
  // visible open finding before its LIMIT); every value is a bound parameter. The position's time goes
  // as text: a parameter typed timestamptz is sent through a JS Date by postgres.js, which cuts the
  // microseconds, and the next page then began again inside the last page's millisecond
  const heldBefore = filter.age ? new Date(deps.now() - AGES[filter.age]).toISOString() : null;
  const rows =
    problems.length > 0
      ? []
      : await session.sql.unsafe<FindingRow[]>(
          `select q.feed, q.event_id, q.reason, q.event_name, q.held_since,
             to_char(q.held_since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as held_since_key,
             q.detail, q.seen_count, q.quarantine_key, q.subscription_id
           from ${schema}.quarantine_page($1, $2, $3, $4::timestamptz, $5, $6::text::timestamptz, $7, $8, $9) q`,
          [
            filter.feed ?? null,
            filter.reason ?? null,
            filter.eventName ?? null,
            heldBefore,
            filter.search ?? null,
            cursor?.heldSince ?? null,
            cursor?.feed ?? null,
            cursor?.key ?? null,
            PAGE_SIZE + 1,
          ] as never[],
        );
  const feeds = (await session.sql.unsafe<{ feed: string }[]>(`select feed from ${schema}.feed_overview order by feed`)).map((r) => r.feed);
  const page = rows.slice(0, PAGE_SIZE);
  const last = page.at(-1);
  const next =
    rows.length > PAGE_SIZE && last
      ? `/quarantine${queryString({ ...filterParams(filter), after: encodeCursor({ heldSince: last.held_since_key, feed: last.feed, key: last.quarantine_key }) })}`
      : undefined;
  const groups = new Map<string, FindingRow[]>();
  for (const row of page) {
    const key = row.subscription_id ?? '(no subscription: malformed)';
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const body = html`${filterForm(filter, feeds)}
  ${problems.length > 0 ? html`<p class="error" role="alert">${problems.join('; ')}</p>` : ''}
  <p>${page.length === 0 ? 'No open finding matches.' : `Showing ${page.length} open findings${cursor ? ' (a later page)' : ''}, oldest first, grouped by subscription.`}
  ${page.length > 0 ? html` <a href="/quarantine/dismiss-all${queryString(filterParams(filter))}">Dismiss all matching…</a>` : ''}</p>
  ${[...groups.entries()].map(
    ([subscription, findings]) => html`<h2>Subscription ${subscription}</h2>
    ${groupNote(filter, findings, next !== undefined)}
    <table><thead><tr><th scope="col">Event</th><th scope="col">Feed</th><th scope="col">Reason</th><th scope="col">Event name</th>
    <th scope="col">Held since</th><th scope="col">Seen</th><th scope="col">Detail</th></tr></thead><tbody>
    ${findings.map(
      (f) => html`<tr><td><a href="${findingHref(f.feed, f.quarantine_key)}">${f.event_id ?? f.quarantine_key}</a></td><td>${f.feed}</td>
      <td>${f.reason}</td><td>${f.event_name ?? '—'}</td><td>${formatTime(f.held_since)}</td><td>${f.seen_count}</td><td>${f.detail}</td></tr>`,
    )}</tbody></table>`,
  )}
  ${next ? html`<p><a href="${next}" rel="next">Next page</a></p>` : ''}`;
  return c.html(layout({ title: 'Quarantine', session, current: '/quarantine', flash: takeFlash(session), body }).text);
}

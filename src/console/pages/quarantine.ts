import type { Context } from 'hono';
import type postgres from 'postgres';
import { type ConsoleDeps, type ConsoleEnv, schemaOf } from '../context.js';
import { formatTime } from '../format.js';
import { html, queryString, type SafeHtml } from '../html.js';
import { layout } from '../layout.js';
import { findingHref } from '../links.js';
import {
  AGES,
  decodeCursor,
  describeFilter,
  encodeCursor,
  filterArguments,
  filterParams,
  findingReasons,
  heldBefore,
  parseQuarantineFilter,
  type QuarantineCursor,
  type QuarantineFilter,
} from '../quarantine-filter.js';
import { takeFlash } from './feeds.js';

export const PAGE_SIZE = 50;
/** The list's total counts this far and then says "more than" (Dismiss all matching counts them all). */
export const TOTAL_AT_MOST = 1000;

/** The total in words: exact up to TOTAL_AT_MOST. Pure. */
export function totalText(total: number): string {
  if (total > TOTAL_AT_MOST) return `More than ${TOTAL_AT_MOST} open findings match`;
  return total === 1 ? '1 open finding matches' : `${total} open findings match`;
}

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
export function filterForm(filter: QuarantineFilter, feeds: readonly string[], reasons: readonly string[]): SafeHtml {
  const option = (value: string, label: string, selected: string | undefined) =>
    html`<option value="${value}"${selected === value ? html` selected` : ''}>${label}</option>`;
  return html`<form method="get" action="/quarantine" class="filters" role="search">
    <label for="f-feed">Feed<select id="f-feed" name="feed">${option('', 'all', filter.feed)}${feeds.map((f) => option(f, f, filter.feed))}</select></label>
    <label for="f-reason">Finding reason<select id="f-reason" name="reason">${option('', 'all', filter.reason)}${reasons.map((r) => option(r, r, filter.reason))}</select></label>
    <label for="f-event">Event name<input id="f-event" name="event_name" value="${filter.eventName ?? ''}" maxlength="64"></label>
    <label for="f-age">Held at least<select id="f-age" name="age">${option('', 'any time', filter.age)}${Object.keys(AGES).map((a) => option(a, a, filter.age))}</select></label>
    <label for="f-q">Search<input id="f-q" name="q" value="${filter.search ?? ''}" maxlength="512" size="34" placeholder="event, subscription or external id"></label>
    <button type="submit">Apply</button>
  </form>`;
}

/** The link to every open finding of a subscription: the filter with it as Search, from the first page. Pure. */
export function groupHref(filter: QuarantineFilter, subscription: string): string {
  return `/quarantine${queryString({ ...filterParams(filter), q: subscription })}`;
}

/** The subscription cell: a link to its group, or why there is none. Pure. */
export function subscriptionCell(filter: QuarantineFilter, subscription: string | null): SafeHtml {
  if (subscription === null) return html`<span class="muted">none (malformed)</span>`;
  if (filter.search === subscription) return html`${subscription}`;
  return html`<a href="${groupHref(filter, subscription)}" title="every open finding of subscription ${subscription}">${subscription}</a>`;
}

/**
 * Which page links a page has. Forward (first page or `after`): Next when a row beyond the page was
 * read. Backward (`before`): the rows came nearest first, one beyond the page means an earlier page.
 * Pure.
 */
export function pageLinks(direction: 'first' | 'after' | 'before', rowsRead: number): { previous: boolean; next: boolean } {
  const more = rowsRead > PAGE_SIZE;
  if (direction === 'before') return { previous: more, next: true };
  return { previous: direction === 'after', next: more };
}

async function readPage(
  sql: postgres.Sql,
  schema: string,
  args: (string | null)[],
  cursor: QuarantineCursor | undefined,
  backward: boolean,
): Promise<FindingRow[]> {
  // quarantine_page filters (_quarantine_filter, the filter count and Dismiss all matching use too),
  // orders and pages inside; every value is a bound parameter. The position's time goes as text: a
  // timestamptz parameter is sent through a JS Date by postgres.js, which cuts the microseconds
  return sql.unsafe<FindingRow[]>(
    `select q.feed, q.event_id, q.reason, q.event_name, q.held_since,
       to_char(q.held_since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as held_since_key,
       q.detail, q.seen_count, q.quarantine_key, q.subscription_id
     from ${schema}.quarantine_page($1, $2, $3, $4::timestamptz, $5, $6::text::timestamptz, $7, $8, $9, $10) q`,
    [...args, cursor?.heldSince ?? null, cursor?.feed ?? null, cursor?.key ?? null, PAGE_SIZE + 1, backward] as never[],
  );
}

/** GET /quarantine: open findings of the visible feeds, filtered, one table, keyset-paged both ways, with the total. */
export async function quarantinePage(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const session = c.get('session');
  const schema = schemaOf(deps);
  const reasons = await findingReasons(session.sql, schema);
  const { filter, problems } = parseQuarantineFilter(c.req.query(), reasons);
  const before = decodeCursor(c.req.query('before'));
  const after = before ? undefined : decodeCursor(c.req.query('after'));
  const direction = before ? 'before' : after ? 'after' : 'first';
  const args = filterArguments(filter, heldBefore(filter, deps.now()));
  const rows = problems.length > 0 ? [] : await readPage(session.sql, schema, args, before ?? after, direction === 'before');
  const [counted] =
    problems.length > 0
      ? [{ matching: '0' }]
      : await session.sql.unsafe<{ matching: string }[]>(
          `select matching from ${schema}.quarantine_count($1, $2, $3, $4::timestamptz, $5, $6)`,
          [...args, TOTAL_AT_MOST + 1] as never[],
        );
  const total = Number(counted?.matching ?? 0);
  const feeds = (await session.sql.unsafe<{ feed: string }[]>(`select feed from ${schema}.feed_overview order by feed`)).map((r) => r.feed);
  const page = direction === 'before' ? rows.slice(0, PAGE_SIZE).reverse() : rows.slice(0, PAGE_SIZE);
  const links = pageLinks(direction, rows.length);
  const first = page[0];
  const last = page.at(-1);
  const position = (row: FindingRow) => encodeCursor({ heldSince: row.held_since_key, feed: row.feed, key: row.quarantine_key });
  const kept = filterParams(filter);
  const previousHref = links.previous && first ? `/quarantine${queryString({ ...kept, before: position(first) })}` : undefined;
  const nextHref = links.next && last ? `/quarantine${queryString({ ...kept, after: position(last) })}` : undefined;
  const firstHref = direction === 'first' ? undefined : `/quarantine${queryString(kept)}`;
  const pager =
    previousHref || nextHref || firstHref
      ? html`<nav class="pager" aria-label="Pages of open findings">
      ${firstHref ? html`<a href="${firstHref}">First page</a>` : ''}
      ${previousHref ? html`<a href="${previousHref}" rel="prev">Previous page</a>` : ''}
      ${nextHref ? html`<a href="${nextHref}" rel="next">Next page</a>` : ''}</nav>`
      : '';
  const body = html`${filterForm(filter, feeds, reasons)}
  ${problems.length > 0 ? html`<p class="error" role="alert">${problems.join('; ')}</p>` : ''}
  <p class="summary"><strong>${totalText(total)}</strong>: ${describeFilter(filter)}.
  ${page.length === 0 ? '' : html` This page shows ${page.length}, oldest first.`}
  ${total > 0 ? html` <a href="/quarantine/dismiss-all${queryString(kept)}">Dismiss all matching…</a>` : ''}</p>
  ${
    page.length === 0
      ? html`<p>No open finding matches.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Open findings" tabindex="0"><table class="compact">
    <thead><tr><th scope="col">Subscription</th><th scope="col">Event</th><th scope="col">Feed</th><th scope="col">Reason</th>
    <th scope="col">Event name</th><th scope="col">Held since</th><th scope="col">Seen</th><th scope="col">Detail</th></tr></thead><tbody>
    ${page.map(
      (f) => html`<tr><td>${subscriptionCell(filter, f.subscription_id)}</td>
      <td><a href="${findingHref(f.feed, f.quarantine_key)}">${f.event_id ?? f.quarantine_key}</a></td><td>${f.feed}</td>
      <td>${f.reason}</td><td>${f.event_name ?? '—'}</td><td>${formatTime(f.held_since)}</td><td>${f.seen_count}</td><td class="detail">${f.detail}</td></tr>`,
    )}</tbody></table></div>`
  }
  ${pager}`;
  return c.html(layout({ title: 'Quarantine', session, current: '/quarantine', flash: takeFlash(session), body }).text);
}

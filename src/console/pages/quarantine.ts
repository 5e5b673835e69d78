import type { Context } from 'hono';
import { asUser, type ConsoleDeps, type ConsoleEnv } from '../context.js';
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
  heldBefore,
  parseQuarantineFilter,
  type QuarantineFilter,
} from '../quarantine-filter.js';
import { visibleFeedNames } from '../../store-api/feeds/feed-overview.js';
import {
  findingReasons,
  type OpenFinding,
  quarantineCount,
  quarantinePage as readQuarantinePage,
} from '../../store-api/triage/quarantine-page.js';
import { takeFlash } from './feeds.js';

export const PAGE_SIZE = 50;
/** The list's total counts this far and then says "more than" (Dismiss all matching counts them all). */
export const TOTAL_AT_MOST = 1000;

/** The total in words: exact up to TOTAL_AT_MOST. Pure. */
export function totalText(total: number): string {
  if (total > TOTAL_AT_MOST) return `More than ${TOTAL_AT_MOST} open findings match`;
  return total === 1 ? '1 open finding matches' : `${total} open findings match`;
}

/** A row of the list: an open finding as quarantine_page returns it. */
export type FindingRow = OpenFinding;

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

/** GET /quarantine: open findings of the visible feeds, filtered, one table, keyset-paged both ways, with the total. */
export async function quarantinePage(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const session = c.get('session');
  const api = asUser(c, deps);
  const reasons = await findingReasons(api);
  const { filter, problems } = parseQuarantineFilter(c.req.query(), reasons);
  const before = decodeCursor(c.req.query('before'));
  const after = before ? undefined : decodeCursor(c.req.query('after'));
  const direction = before ? 'before' : after ? 'after' : 'first';
  const args = filterArguments(filter, heldBefore(filter, deps.now()));
  const rows = problems.length > 0 ? [] : await readQuarantinePage(api, args, before ?? after, PAGE_SIZE + 1, direction === 'before');
  const total = problems.length > 0 ? 0 : (await quarantineCount(api, args, TOTAL_AT_MOST + 1)).matching;
  const feeds = await visibleFeedNames(api);
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

import type { Context } from 'hono';
import { asUser, type ConsoleDeps, type ConsoleEnv } from '../context.js';
import { formatTime } from '../format.js';
import { html, queryString } from '../html.js';
import { layout } from '../layout.js';
import { auditSentence } from './audit-sentence.js';
import { FEED_NAME_PATTERN } from '../../db/feed-name.js';
import { type AuditPosition, auditTrail } from '../../store-api/audit/audit-trail.js';

const PAGE = 100;
const ACTION = /^[a-z][a-z_.]{0,63}$/;
const FEED = FEED_NAME_PATTERN;
const ACTOR = /^[\x21-\x7e]{1,256}$/;

// where the next (older) page starts, as the Older link carries it (AuditPosition)
const POSITION = /^([0-9]{1,18})\.([0-9]{1,18})\.([a-z0-9_-]{0,64})$/;

/** `before=<at in µs>.<id>.<feed>` as an AuditPosition, or undefined. Pure. */
export function parseAuditPosition(text: string | undefined): AuditPosition | undefined {
  const match = POSITION.exec(text?.trim() ?? '');
  if (!match) return undefined;
  return { atMicros: match[1] ?? '', id: match[2] ?? '', feed: match[3] ?? '' };
}

/** The query-string form of a position (parseAuditPosition reads it back). Pure. */
export function auditPositionText(position: AuditPosition): string {
  return `${position.atMicros}.${position.id}.${position.feed}`;
}

/** The audit filter from the query string; bad values are named. Pure. */
export function parseAuditFilter(query: Record<string, string | undefined>) {
  const problems: string[] = [];
  const pick = (name: string, rule: RegExp, label: string) => {
    const v = query[name]?.trim();
    if (!v) return undefined;
    if (rule.test(v)) return v;
    problems.push(`${label}: not valid`);
    return undefined;
  };
  const time = (name: string, label: string) => {
    const v = query[name]?.trim();
    if (!v) return undefined;
    const ms = Date.parse(v.length === 16 ? `${v}:00Z` : v);
    if (!Number.isNaN(ms) && v.length <= 40) return new Date(ms);
    problems.push(`${label}: a date and time (YYYY-MM-DDTHH:MM, UTC)`);
    return undefined;
  };
  const before = parseAuditPosition(query.before);
  return {
    filter: {
      action: pick('action', ACTION, 'Action'),
      feed: pick('feed', FEED, 'Feed'),
      actor: pick('actor', ACTOR, 'Actor'),
      from: time('from', 'From'),
      to: time('to', 'To'),
      before,
    },
    problems,
  };
}

/** GET /audit: the audit trail the role may read (audit_trail), newest first, paged by (time, feed, id). */
export async function auditPage(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const session = c.get('session');
  const query = c.req.query();
  const { filter, problems } = parseAuditFilter(query);
  const rows = problems.length > 0 ? [] : await auditTrail(asUser(c, deps), filter, PAGE + 1);
  const page = rows.slice(0, PAGE);
  const last = page.at(-1);
  const keep = { action: query.action, feed: query.feed, actor: query.actor, from: query.from, to: query.to };
  const body = html`<form method="get" action="/audit" class="filters" role="search">
    <label for="a-action">Action<input id="a-action" name="action" value="${filter.action ?? ''}" maxlength="64" placeholder="quarantine.dismiss"></label>
    <label for="a-feed">Feed<input id="a-feed" name="feed" value="${filter.feed ?? ''}" maxlength="64"></label>
    <label for="a-actor">Actor<input id="a-actor" name="actor" value="${filter.actor ?? ''}" maxlength="256"></label>
    <label for="a-from">From (UTC)<input id="a-from" name="from" type="datetime-local" value="${query.from ?? ''}"></label>
    <label for="a-to">To (UTC)<input id="a-to" name="to" type="datetime-local" value="${query.to ?? ''}"></label>
    <button type="submit">Apply</button></form>
  ${problems.length > 0 ? html`<p class="error" role="alert">${problems.join('; ')}</p>` : ''}
  ${
    page.length === 0
      ? html`<p>No audit row matches.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Audit entries" tabindex="0"><table class="audit"><thead><tr><th scope="col">When</th><th scope="col">What happened</th></tr></thead><tbody>
    ${page.map((r) => {
      const { sentence, details } = auditSentence(r);
      return html`<tr><td class="when">${formatTime(r.at)}</td><td>${sentence} <small class="muted">${r.action}</small>
        ${details.length === 0 ? '' : html`<ul class="details">${details.map(([label, value]) => html`<li><span>${label}:</span> ${value}</li>`)}</ul>`}</td></tr>`;
    })}</tbody></table></div>`
  }
  ${rows.length > PAGE && last ? html`<p><a href="/audit${queryString({ ...keep, before: auditPositionText({ atMicros: last.at_micros, feed: last.feed ?? '', id: String(last.id) }) })}" rel="next">Older</a></p>` : ''}`;
  return c.html(layout({ title: 'Audit', session, current: '/audit', body }).text);
}

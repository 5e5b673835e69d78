import type { Context } from 'hono';
import { type ConsoleDeps, type ConsoleEnv, schemaOf } from '../context.js';
import { formatTime } from '../format.js';
import { html, queryString, type SafeHtml } from '../html.js';
import { layout } from '../layout.js';
import { takeFlash } from './feeds.js';
import { notFoundPage } from './not-found.js';
import { findingHref, prescriptionHref } from '../links.js';
import { FEED_NAME_PATTERN } from '../../db/feed-name.js';

const IDENTIFIER = /^[\x21-\x7e]{1,512}$/;
const FEED = FEED_NAME_PATTERN;

interface PrescriptionRow {
  feed: string;
  external_id: string;
  status: string | null;
  status_occurred_at: Date | null;
  events: number;
  subscription_id: string | null;
  updated_at: Date;
}

/**
 * The search of prescriptions whose external_id starts with `q`. LIKE is not leakproof, so through the
 * security_barrier view it cannot reach an index; the bytewise range (~>=~, ~<~ are leakproof) narrows
 * by prescriptions_external_id_pattern_idx and LIKE keeps the exact meaning. The upper bound is the
 * prefix with its last character's code point plus one (bytewise order of UTF-8 is code point order). Pure.
 */
export function prescriptionSearch(schema: string, q: string): { text: string; params: string[] } {
  const last = q.codePointAt(q.length - 1) ?? 0;
  const upper = `${q.slice(0, -1)}${String.fromCodePoint(last + 1)}`;
  return {
    text: `select feed, external_id, status, status_occurred_at, events, subscription_id, updated_at from ${schema}.prescription_status
      where external_id ~>=~ $2 and external_id ~<~ $3 and external_id like $1 escape '\\' order by external_id, feed limit 50`,
    params: [`${q.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`, q, upper],
  };
}

/** GET /prescriptions: search local prescriptions by external_id (exact, or the start of one). */
export async function prescriptionsPage(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const session = c.get('session');
  const q = c.req.query('q')?.trim() ?? '';
  const valid = q === '' || IDENTIFIER.test(q);
  const rows =
    q !== '' && valid
      ? await (() => {
          const search = prescriptionSearch(schemaOf(deps), q);
          return session.sql.unsafe<PrescriptionRow[]>(search.text, search.params as never[]);
        })()
      : [];
  const body = html`<form method="get" action="/prescriptions" class="filters" role="search">
    <label for="q">External id (or its start)<input id="q" name="q" value="${q}" maxlength="512" required></label><button type="submit">Search</button></form>
  ${valid ? '' : html`<p class="error" role="alert">External id: 1-512 visible characters.</p>`}
  ${
    q === '' || !valid
      ? ''
      : rows.length === 0
        ? html`<p>No local prescription your role can see matches.</p>`
        : html`<div class="table-scroll" role="region" aria-label="Matching prescriptions" tabindex="0"><table><thead><tr><th scope="col">External id</th><th scope="col">Feed</th><th scope="col">Status</th><th scope="col">Status since</th><th scope="col">Events</th></tr></thead><tbody>
    ${rows.map((r) => html`<tr><td><a href="${prescriptionHref(r.feed, r.external_id)}">${r.external_id}</a></td><td>${r.feed}</td><td>${r.status ?? 'none yet'}</td><td>${formatTime(r.status_occurred_at)}</td><td>${r.events}</td></tr>`)}
    </tbody></table></div>`
  }`;
  return c.html(layout({ title: 'Prescriptions', session, current: '/prescriptions', body }).text);
}

/** The prescription's subscriptions in words: each linked by registration or by which resolve. Pure. */
export function subscriptionList(
  links: readonly { subscription_id: string; linked_by: string; event_id: string | null; linked_at: Date | null }[],
): SafeHtml {
  if (links.length === 0) return html`none linked yet`;
  return html`${links.map(
    (l, i) =>
      html`${i > 0 ? html`<br>` : ''}<a href="/quarantine${queryString({ q: l.subscription_id })}">${l.subscription_id}</a> ${
        l.linked_by === 'resolve'
          ? html`<small>(linked by the resolve of event ${l.event_id ?? '—'}, ${formatTime(l.linked_at)})</small>`
          : html`<small>(registered)</small>`
      }`,
  )}`;
}

/** GET /prescriptions/:feed/:externalId: status timeline, outbox sends, open findings of its subscription. */
export async function prescriptionPage(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const session = c.get('session');
  const schema = schemaOf(deps);
  const feed = c.req.param('feed') ?? '';
  const externalId = c.req.param('externalId') ?? '';
  if (!FEED.test(feed) || !IDENTIFIER.test(externalId)) return c.html(notFoundPage(session), 404);
  const [rx] = await session.sql.unsafe<PrescriptionRow[]>(
    `select feed, external_id, status, status_occurred_at, events, subscription_id, updated_at from ${schema}.prescription_status where feed = $1 and external_id = $2`,
    [feed, externalId],
  );
  if (!rx) return c.html(notFoundPage(session), 404);
  const timeline = await session.sql.unsafe<
    { previous_status: string | null; new_status: string; event_id: string | null; occurred_at: Date | null; changed_at: Date }[]
  >(
    `select previous_status, new_status, event_id, occurred_at, changed_at from ${schema}.prescription_history where feed = $1 and external_id = $2 order by id limit 500`,
    [feed, externalId],
  );
  const sends = await session.sql.unsafe<
    {
      id: string;
      kind: string;
      state: string;
      attempts: number;
      response_status: number | null;
      created_at: Date;
      completed_at: Date | null;
    }[]
  >(
    `select id, kind, state, attempts, response_status, created_at, completed_at from ${schema}.outbox_status where feed = $1 and external_id = $2 order by id limit 200`,
    [feed, externalId],
  );
  // its own subscription and those a resolve linked to it (a resolve writes the link, not the prescription's column)
  const links = await session.sql.unsafe<{ subscription_id: string; linked_by: string; event_id: string | null; linked_at: Date | null }[]>(
    `select subscription_id, linked_by, event_id, linked_at from ${schema}.prescription_subscriptions($1, $2)`,
    [feed, externalId],
  );
  const subscriptions = [...new Set(links.map((l) => l.subscription_id))];
  // each subscription's open findings through the quarantine filter's Search (quarantine_page: index
  // lookups); quarantine_open filtered by subscription walked every open finding of the feed (45 ms at 10k)
  const findings: {
    feed: string;
    quarantine_key: string;
    event_id: string | null;
    reason: string;
    event_name: string | null;
    held_since: Date;
  }[] = [];
  for (const subscription of subscriptions.slice(0, 20)) {
    const rows = await session.sql.unsafe<(typeof findings)[number][]>(
      `select feed, quarantine_key, event_id, reason, event_name, held_since
       from ${schema}.quarantine_page($1, null, null, null, $2, null, null, null, 200, false) where subscription_id = $2`,
      [feed, subscription],
    );
    findings.push(...rows);
  }
  findings.sort((a, b) => a.held_since.getTime() - b.held_since.getTime());
  const body = html`<dl><dt>Feed</dt><dd>${rx.feed}</dd><dt>Status</dt><dd>${rx.status ?? 'none yet'}</dd>
  <dt>Status since</dt><dd>${formatTime(rx.status_occurred_at)}</dd><dt>Subscription</dt><dd>${subscriptionList(links)}</dd>
  <dt>Events applied</dt><dd>${rx.events}</dd></dl>
  <h2>Status timeline</h2>
  ${
    timeline.length === 0
      ? html`<p>No status change yet.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Status timeline" tabindex="0"><table><thead><tr><th scope="col">Changed</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Event</th><th scope="col">Occurred</th></tr></thead><tbody>
    ${timeline.map((t) => html`<tr><td>${formatTime(t.changed_at)}</td><td>${t.previous_status ?? '—'}</td><td>${t.new_status}</td><td>${t.event_id ?? '—'}</td><td>${formatTime(t.occurred_at)}</td></tr>`)}</tbody></table></div>`
  }
  <h2>Outbox</h2>
  ${
    sends.length === 0
      ? html`<p>Nothing sent through the outbox.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Outbox sends" tabindex="0"><table><thead><tr><th scope="col">Id</th><th scope="col">Kind</th><th scope="col">State</th><th scope="col">Attempts</th><th scope="col">HTTP status</th><th scope="col">Created</th><th scope="col">Completed</th></tr></thead><tbody>
    ${sends.map((s) => html`<tr><td>${s.id}</td><td>${s.kind}</td><td>${s.state}</td><td>${s.attempts}</td><td>${s.response_status ?? '—'}</td><td>${formatTime(s.created_at)}</td><td>${formatTime(s.completed_at)}</td></tr>`)}</tbody></table></div>`
  }
  <h2>Open findings of its subscriptions</h2>
  ${
    findings.length === 0
      ? html`<p>None.</p>`
      : html`<ul>${findings.map((f) => html`<li><a href="${findingHref(f.feed, f.quarantine_key)}">${f.event_id ?? f.quarantine_key}</a>: ${f.reason}, ${f.event_name ?? '—'}, held since ${formatTime(f.held_since)}</li>`)}</ul>`
  }`;
  // a resolution lands here (finding.ts): its message shows above the timeline it changed
  return c.html(
    layout({ title: `Prescription ${rx.external_id}`, session, current: '/prescriptions', flash: takeFlash(session), body }).text,
  );
}

import type { Context } from 'hono';
import { asUser, type ConsoleDeps, type ConsoleEnv } from '../context.js';
import { formatTime } from '../format.js';
import { html, queryString, type SafeHtml } from '../html.js';
import { layout } from '../layout.js';
import { takeFlash } from './feeds.js';
import { notFoundPage } from './not-found.js';
import { findingHref, prescriptionHref } from '../links.js';
import { FEED_NAME_PATTERN } from '../../db/feed-name.js';
import {
  outboxRows,
  prescription,
  prescriptionHistory,
  prescriptionSubscriptions,
  searchPrescriptions,
  type SubscriptionLink,
} from '../../store-api/registration/prescription-calls.js';
import { type OpenFinding, subscriptionFindings } from '../../store-api/triage/quarantine-page.js';
import { IDENTIFIER_PATTERN as IDENTIFIER } from '../../store-api/triage/vocabulary.js';

const FEED = FEED_NAME_PATTERN;

/** GET /prescriptions: search local prescriptions by external_id (exact, or the start of one). */
export async function prescriptionsPage(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const session = c.get('session');
  const q = c.req.query('q')?.trim() ?? '';
  const valid = q === '' || IDENTIFIER.test(q);
  const rows = q !== '' && valid ? await searchPrescriptions(asUser(c, deps), q) : [];
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
export function subscriptionList(links: readonly SubscriptionLink[]): SafeHtml {
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
  const api = asUser(c, deps);
  const feed = c.req.param('feed') ?? '';
  const externalId = c.req.param('externalId') ?? '';
  if (!FEED.test(feed) || !IDENTIFIER.test(externalId)) return c.html(notFoundPage(session), 404);
  const rx = await prescription(api, feed, externalId);
  if (!rx) return c.html(notFoundPage(session), 404);
  const timeline = await prescriptionHistory(api, feed, externalId, 500);
  const sends = await outboxRows(api, feed, externalId, 200);
  // its own subscription and those a resolve linked to it (a resolve writes the link, not the prescription's column)
  const links = await prescriptionSubscriptions(api, feed, externalId);
  const subscriptions = [...new Set(links.map((l) => l.subscription_id))];
  // each subscription's open findings through the quarantine filter's Search (quarantine_page: index
  // lookups); quarantine_open filtered by subscription walked every open finding of the feed (45 ms at 10k)
  const findings: OpenFinding[] = [];
  for (const subscription of subscriptions.slice(0, 20)) findings.push(...(await subscriptionFindings(api, feed, subscription, 200)));
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

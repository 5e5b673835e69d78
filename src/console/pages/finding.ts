import type { Context } from 'hono';
import { asUser, type ConsoleDeps, type ConsoleEnv } from '../context.js';
import { CSRF_FIELD } from '../csrf.js';
import { formatTime } from '../format.js';
import { html, queryString, type SafeHtml } from '../html.js';
import { layout } from '../layout.js';
import { sqlProblem } from '../sql-problem.js';
import { notFoundPage, problemPage } from './not-found.js';
import { findingHref, prescriptionHref } from '../links.js';
import { takeFlash } from './feeds.js';
import { FEED_NAME_PATTERN } from '../../db/feed-name.js';
import { dismissQuarantined, resolveQuarantined, showQuarantined } from '../../store-api/triage/finding-actions.js';
import { type OpenFinding as FindingRow, openFinding, quarantineCount } from '../../store-api/triage/quarantine-page.js';
import { prescriptionsStartingWith } from '../../store-api/registration/prescription-calls.js';
import { DISMISS_REASONS, IDENTIFIER_PATTERN as IDENTIFIER } from '../../store-api/triage/vocabulary.js';

const FEED = FEED_NAME_PATTERN;

/** How many other open findings its subscription has (what "the whole subscription" would also close). */
async function otherOpenFindings(c: Context<ConsoleEnv>, deps: ConsoleDeps, finding: FindingRow): Promise<number> {
  if (finding.subscription_id === null) return 0;
  // the quarantine filter's count with the subscription as Search (index lookups), not quarantine_open by
  // subscription (a walk of the feed's open findings); a Search also matches an event id equal to it
  const { matching } = await quarantineCount(
    asUser(c, deps),
    { feed: finding.feed, reason: null, eventName: null, heldBefore: null, search: finding.subscription_id },
    null,
  );
  return Math.max(0, matching - 1);
}

/** The finding a path names, read through quarantine_open: undefined when the role cannot see it. */
async function visibleFinding(c: Context<ConsoleEnv>, deps: ConsoleDeps): Promise<FindingRow | undefined> {
  const feed = c.req.param('feed') ?? '';
  const key = c.req.param('key') ?? '';
  if (!FEED.test(feed) || !IDENTIFIER.test(key)) return undefined;
  return openFinding(asUser(c, deps), feed, key);
}

const IDENTITY_LABELS: Record<string, string> = {
  patient_first_name: 'Patient first name',
  patient_last_name: 'Patient last name',
  patient_dob: 'Date of birth',
  patient_state: 'Patient state',
  patient_phone: 'Patient phone',
  prescriber_npi: 'Prescriber NPI',
  written_date: 'Written date',
  drug_ndc: 'Drug NDC',
  erx_message_id: 'eRx message id',
};

/** The identity block: masked, or the revealed fields. */
function identityBlock(identity: Record<string, unknown> | null | undefined, revealed: boolean): SafeHtml {
  if (!revealed)
    return html`<p class="masked">Identity hidden. Revealing it is a PHI read recorded in the audit trail under your role.</p>`;
  if (!identity || typeof identity !== 'object') return html`<p>This finding holds no identity.</p>`;
  return html`<dl>${Object.entries(identity).map(([k, v]) => html`<dt>${IDENTITY_LABELS[k] ?? k}</dt><dd>${typeof v === 'string' ? v : JSON.stringify(v)}</dd>`)}</dl>`;
}

/** The finding's page; `identity` is given only in the response to Reveal identity (never stored). */
async function renderFinding(
  c: Context<ConsoleEnv>,
  deps: ConsoleDeps,
  finding: FindingRow,
  options: { identity?: Record<string, unknown> | null; revealed?: boolean; message?: string; status?: 200 | 400 | 403 | 409 | 500 } = {},
) {
  const session = c.get('session');
  const href = findingHref(finding.feed, finding.quarantine_key);
  const rx = c.req.query('rx')?.trim();
  const matches = rx && IDENTIFIER.test(rx) ? await prescriptionsStartingWith(asUser(c, deps), finding.feed, rx) : undefined;
  const csrf = html`<input type="hidden" name="${CSRF_FIELD}" value="${session.csrf}">`;
  const siblings = await otherOpenFindings(c, deps, finding);
  const body = html`${options.message ? html`<p class="error" role="alert">${options.message}</p>` : ''}
  <dl><dt>Feed</dt><dd>${finding.feed}</dd><dt>Event id</dt><dd>${finding.event_id ?? '(none: malformed)'}</dd>
  <dt>Reason</dt><dd>${finding.reason}</dd><dt>Detail</dt><dd>${finding.detail}</dd><dt>Event name</dt><dd>${finding.event_name ?? '—'}</dd>
  <dt>Subscription</dt><dd>${finding.subscription_id ?? '—'}</dd><dt>Held since</dt><dd>${formatTime(finding.held_since)}</dd>
  <dt>Times seen</dt><dd>${finding.seen_count}</dd></dl>
  <h2>Identity</h2>${identityBlock(options.identity, options.revealed === true)}
  ${options.revealed ? '' : html`<form method="post" action="${href}/reveal">${csrf}<button type="submit">Reveal identity</button></form>`}
  <div class="actions">
    <form method="post" action="${href}/resolve"><h2>Resolve</h2>${csrf}
      <label for="external_id">External id<input id="external_id" name="external_id" required maxlength="512" value="${rx ?? ''}"></label>
      <p><button type="submit">Resolve</button></p></form>
    <form method="get" action="${href}"><h2>Find a local prescription</h2>
      <label for="rx">External id starts with<input id="rx" name="rx" maxlength="512" value="${rx ?? ''}"></label>
      <p><button type="submit">Find</button></p>
      ${matches ? (matches.length === 0 ? html`<p>No local prescription of ${finding.feed} matches.</p>` : html`<ul>${matches.map((m) => html`<li><a href="${prescriptionHref(finding.feed, m.external_id)}">${m.external_id}</a> (${m.status ?? 'no status yet'})</li>`)}</ul>`) : ''}
    </form>
    <form method="post" action="${href}/dismiss"><h2>Dismiss</h2>${csrf}
      <fieldset><legend>What it closes</legend>
      <label class="choice"><input type="radio" name="scope" value="this_finding" checked> ${DISMISS_SCOPES.this_finding}: ${finding.event_id ?? finding.quarantine_key}</label>
      ${
        finding.subscription_id === null
          ? ''
          : html`<label class="choice"><input type="radio" name="scope" value="whole_subscription"> ${DISMISS_SCOPES.whole_subscription}: ${siblings === 0 ? html`this finding alone, as subscription ${finding.subscription_id} has no other open finding` : html`this finding and the ${siblings} other open finding${siblings === 1 ? '' : 's'} of subscription ${finding.subscription_id}`}</label>`
      }</fieldset>
      <label for="reason">Dismissal reason<select id="reason" name="reason">${DISMISS_REASONS.map((r) => html`<option value="${r}">${r}</option>`)}</select></label>
      <p><button type="submit" class="danger">Dismiss</button></p>
      <p><small>The CLI's <code>intake-sync quarantine dismiss</code> closes ${DISMISS_SCOPES.whole_subscription} unless given <code>--only-this-event</code> (${DISMISS_SCOPES.this_finding}).</small></p></form>
  </div>
  <p><a href="/quarantine${queryString({ feed: finding.feed })}">Back to the quarantine</a></p>`;
  const title = `Finding ${finding.event_id ?? finding.quarantine_key}`;
  return c.html(layout({ title, session, current: '/quarantine', flash: takeFlash(session), body }).text, options.status ?? 200);
}

/** GET /quarantine/:feed/:key */
export async function findingPage(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const finding = await visibleFinding(c, deps);
  if (!finding) return c.html(notFoundPage(c.get('session')), 404);
  return renderFinding(c, deps, finding);
}

/**
 * POST /quarantine/:feed/:key/reveal: the SQL API's two-step reveal as the user (showQuarantined,
 * src/store-api/triage/finding-actions.ts: the read on record first); the identity is in this response only.
 */
export async function revealFinding(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const finding = await visibleFinding(c, deps);
  if (!finding) return c.html(notFoundPage(c.get('session')), 404);
  try {
    const shown = await showQuarantined(asUser(c, deps), finding.feed, finding.quarantine_key);
    deps.log.info({ event: 'console.reveal', role: c.get('session').role, feed: finding.feed }, 'identity revealed');
    return renderFinding(c, deps, finding, { identity: shown.prescription_identity, revealed: true });
  } catch (error) {
    return actionFailed(c, deps, finding, error);
  }
}

/** POST /quarantine/:feed/:key/resolve: resolve_quarantined() as the user. */
export async function resolveFinding(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const finding = await visibleFinding(c, deps);
  if (!finding) return c.html(notFoundPage(c.get('session')), 404);
  const form = await c.req.parseBody();
  const externalId = typeof form.external_id === 'string' ? form.external_id.trim() : '';
  if (!IDENTIFIER.test(externalId))
    return renderFinding(c, deps, finding, { message: 'External id: 1-512 visible characters.', status: 400 });
  try {
    const result = await resolveQuarantined(asUser(c, deps), finding.feed, finding.quarantine_key, externalId);
    c.get('session').flash =
      `Resolved ${finding.event_id ?? finding.quarantine_key} to ${externalId}: ${result.events_applied} events applied, status ${result.status ?? 'none'}.`;
    // to the prescription it now belongs to: its timeline shows the events the resolution applied
    return c.redirect(prescriptionHref(finding.feed, externalId), 303);
  } catch (error) {
    return actionFailed(c, deps, finding, error);
  }
}

/**
 * The two scopes of a single Dismiss, named the same in the console and the CLI (`quarantine dismiss`
 * closes the whole subscription unless --only-this-event). The console offers this finding only first.
 */
export const DISMISS_SCOPES = { this_finding: 'this finding only', whole_subscription: 'the whole subscription' } as const;

/** What a Dismiss says it did. Pure. */
export function dismissedMessage(finding: string, reason: string, closed: number): string {
  const others = closed - 1;
  if (others <= 0) return `Dismissed ${finding} (${reason}): this finding only.`;
  return `Dismissed ${finding} and ${others} other open finding${others === 1 ? '' : 's'} of its subscription (${reason}): the whole subscription, ${closed} in all.`;
}

/** POST /quarantine/:feed/:key/dismiss: dismiss_quarantined() as the user, with the scope the form chose. */
export async function dismissFinding(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const finding = await visibleFinding(c, deps);
  if (!finding) return c.html(notFoundPage(c.get('session')), 404);
  const form = await c.req.parseBody();
  const reason = typeof form.reason === 'string' ? form.reason : '';
  const scope = typeof form.scope === 'string' ? form.scope : 'this_finding';
  if (!(DISMISS_REASONS as readonly string[]).includes(reason)) {
    return renderFinding(c, deps, finding, { message: 'Dismissal reason: choose one of the codes.', status: 400 });
  }
  if (!Object.hasOwn(DISMISS_SCOPES, scope))
    return renderFinding(c, deps, finding, { message: 'What it closes: choose one.', status: 400 });
  const onlyThis = scope === 'this_finding';
  try {
    const closed = await dismissQuarantined(asUser(c, deps), finding.feed, finding.quarantine_key, reason, undefined, onlyThis);
    c.get('session').flash = dismissedMessage(finding.event_id ?? finding.quarantine_key, reason, closed || 1);
    return c.redirect(`/quarantine${queryString({ feed: finding.feed })}`, 303);
  } catch (error) {
    return actionFailed(c, deps, finding, error);
  }
}

function actionFailed(c: Context<ConsoleEnv>, deps: ConsoleDeps, finding: FindingRow, error: unknown) {
  const problem = sqlProblem(error);
  deps.log.warn({ event: 'console.action_failed', code: (error as { code?: string }).code, feed: finding.feed }, 'console action refused');
  if (problem.status === 404) return c.html(problemPage('Not found', problem.message, c.get('session')), 404);
  return renderFinding(c, deps, finding, { message: problem.message, status: problem.status });
}

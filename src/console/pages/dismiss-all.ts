import type { Context } from 'hono';
import { asUser, type ConsoleDeps, type ConsoleEnv } from '../context.js';
import { CSRF_FIELD } from '../csrf.js';
import { html, queryString } from '../html.js';
import { layout } from '../layout.js';
import {
  describeFilter,
  filterArguments,
  filterParams,
  heldBefore,
  parseQuarantineFilter,
  type QuarantineFilter,
} from '../quarantine-filter.js';
import { sqlProblem } from '../sql-problem.js';
import { dismissMatchingBatch, findingReasons, quarantineCount } from '../../store-api/triage/quarantine-page.js';
import { DISMISS_REASONS } from '../../store-api/triage/vocabulary.js';
import { problemPage } from './not-found.js';

/** Findings dismissed per transaction: each holds the feeds' match locks, so a batch stays short. */
export const DISMISS_BATCH = 100;
/** The most one confirmation dismisses; a larger set is narrowed first. */
export const DISMISS_ALL_MAX = 100_000;

/** What Dismiss all matching closes, in the words the finding page and the CLI use for their scopes. */
export const ALL_MATCHING_SCOPE =
  'all matching: each finding counted here closes on its own (this finding only), not the other findings of its subscription';

/**
 * What a finished Dismiss all matching says: how many it closed, how many of those counted had
 * closed meanwhile, and how many matching findings arrived after the count and were left open. Pure.
 */
export function dismissedAllMessage(counted: number, dismissed: number, leftOpen: number, reason: string): string {
  const parts = [`Dismissed ${dismissed} of the ${counted} ${findings(counted)} counted (${reason}).`];
  const gone = counted - dismissed;
  if (gone > 0)
    parts.push(`${gone} of those counted had closed meanwhile (matched, resolved or dismissed by someone else) and were not touched.`);
  if (leftOpen > 0) {
    parts.push(
      `${leftOpen} matching finding${leftOpen === 1 ? '' : 's'} arrived after the count and ${leftOpen === 1 ? 'was' : 'were'} left open: nobody had seen ${leftOpen === 1 ? 'it' : 'them'}; review below.`,
    );
  }
  return parts.join(' ');
}

const findings = (n: number) => (n === 1 ? 'finding' : 'findings');

function confirmPage(c: Context<ConsoleEnv>, filter: QuarantineFilter, held: string | null, count: number, asOf: string) {
  const session = c.get('session');
  const hidden = Object.entries(filterParams(filter))
    .filter(([, v]) => v !== undefined)
    // the filter's `reason` (a finding reason) travels as reason_of_finding: `reason` is the dismissal's code
    .map(([k, v]) => html`<input type="hidden" name="${k === 'reason' ? 'reason_of_finding' : k}" value="${v}">`);
  const body = html`<p>Filter: ${describeFilter(filter)}.</p>
  <p><strong>${count}</strong> open ${findings(count)} match, counted now (a dry run: nothing was changed yet).</p>
  ${
    count === 0
      ? ''
      : count > DISMISS_ALL_MAX
        ? html`<p>That is more than ${DISMISS_ALL_MAX}: narrow the filter first.</p>`
        : html`<form method="post" action="/quarantine/dismiss-all" class="confirm"><input type="hidden" name="${CSRF_FIELD}" value="${session.csrf}">${hidden}
    <input type="hidden" name="held_before" value="${held ?? ''}"><input type="hidden" name="as_of" value="${asOf}">
    <input type="hidden" name="count" value="${count}">
    <p>Confirm closes exactly ${count === 1 ? 'this finding' : `these ${count} findings`}, as dismissed, one audit row each. Scope: ${ALL_MATCHING_SCOPE}.
    A finding that arrives after this count stays open, and one that closes meanwhile is not touched.</p>
    <label for="reason">Dismissal reason<select id="reason" name="reason">${DISMISS_REASONS.map((r) => html`<option value="${r}">${r}</option>`)}</select></label>
    <p><button type="submit" class="danger">Dismiss ${count === 1 ? 'this finding' : `these ${count} findings`}</button></p></form>`
  }
  <p><a href="/quarantine${queryString(filterParams(filter))}">Back to the quarantine</a></p>`;
  return c.html(layout({ title: 'Dismiss all matching', session, current: '/quarantine', body }).text);
}

/** GET /quarantine/dismiss-all: the dry run: how many findings the filter matches (quarantine_count), and Confirm. */
export async function dismissAllPage(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const session = c.get('session');
  const api = asUser(c, deps);
  const { filter, problems } = parseQuarantineFilter(c.req.query(), await findingReasons(api));
  if (problems.length > 0) return c.html(problemPage('Dismiss all matching', problems.join('; '), session), 400);
  // the age's instant is fixed here and carried with Confirm: the set counted is the set closed
  const held = heldBefore(filter, deps.now());
  // one beyond the most a confirmation takes: enough to say "narrow the filter first"
  const { matching, asOf } = await quarantineCount(api, filterArguments(filter, held), DISMISS_ALL_MAX + 1);
  return confirmPage(c, filter, held, matching, asOf);
}

const AS_OF = /^[0-9]{1,19}$/;

/**
 * POST /quarantine/dismiss-all: dismiss_matching() as the user, DISMISS_BATCH per transaction (the
 * feeds' pages wait for at most one batch), for the filter and the count's instant carried with
 * Confirm (as_of, held_before): exactly the findings counted, those still open; the page then says
 * how many arrived after the count and were left open.
 */
export async function dismissAll(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const session = c.get('session');
  const api = asUser(c, deps);
  const form = await c.req.parseBody();
  const text = (k: string) => (typeof form[k] === 'string' ? (form[k] as string) : undefined);
  const { filter, problems } = parseQuarantineFilter(
    { feed: text('feed'), reason: text('reason_of_finding'), event_name: text('event_name'), age: text('age'), q: text('q') },
    await findingReasons(api),
  );
  const reason = text('reason') ?? '';
  const counted = Number(text('count'));
  const asOf = text('as_of') ?? '';
  const heldText = text('held_before') ?? '';
  const held = heldText === '' ? null : heldText;
  const heldValid =
    held === null ? filter.age === undefined : filter.age !== undefined && held.length <= 40 && !Number.isNaN(Date.parse(held));
  if (
    problems.length > 0 ||
    !(DISMISS_REASONS as readonly string[]).includes(reason) ||
    !Number.isInteger(counted) ||
    counted < 1 ||
    counted > DISMISS_ALL_MAX ||
    !AS_OF.test(asOf) ||
    !heldValid
  ) {
    return c.html(problemPage('Dismiss all matching', 'The confirmation was incomplete: start again from the quarantine.', session), 400);
  }
  const args = filterArguments(filter, held);
  let dismissed = 0;
  let leftOpen = 0;
  try {
    for (;;) {
      const batch = await dismissMatchingBatch(api, args, asOf, reason, DISMISS_BATCH);
      dismissed += batch.dismissed;
      if (batch.dismissed < DISMISS_BATCH) {
        leftOpen = batch.leftOpen;
        break;
      }
    }
  } catch (error) {
    const problem = sqlProblem(error);
    deps.log.warn({ event: 'console.dismiss_all_failed', code: (error as { code?: string }).code, dismissed }, 'dismiss all stopped');
    return c.html(problemPage('Dismiss all matching', `Stopped after ${dismissed} dismissed: ${problem.message}`, session), problem.status);
  }
  deps.log.info({ event: 'console.dismiss_all', role: session.role, dismissed, left_open: leftOpen }, 'dismissed all matching');
  session.flash = dismissedAllMessage(counted, dismissed, leftOpen, reason);
  return c.redirect(`/quarantine${queryString(filterParams(filter))}`, 303);
}

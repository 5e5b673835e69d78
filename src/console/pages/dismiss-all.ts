import type { Context } from 'hono';
import type postgres from 'postgres';
import { type ConsoleDeps, type ConsoleEnv, schemaOf } from '../context.js';
import { CSRF_FIELD } from '../csrf.js';
import { html, queryString } from '../html.js';
import { layout } from '../layout.js';
import { DISMISS_REASONS, filterClause, filterParams, parseQuarantineFilter, type QuarantineFilter } from '../quarantine-filter.js';
import { sqlProblem } from '../sql-problem.js';
import { problemPage } from './not-found.js';

/** Findings dismissed per transaction: each takes the match lock, so a batch stays short. */
export const DISMISS_BATCH = 100;
/** The most one confirmation dismisses; a larger set is narrowed first. */
export const DISMISS_ALL_MAX = 100_000;

async function countMatching(sql: postgres.Sql, schema: string, filter: QuarantineFilter, now: Date): Promise<number> {
  const { where, params } = filterClause(filter, schema, now);
  const [row] = await sql.unsafe<{ n: string }[]>(
    `select count(*) as n from ${schema}.quarantine_open q where ${where}`,
    params as never[],
  );
  return Number(row?.n ?? 0);
}

function confirmPage(c: Context<ConsoleEnv>, filter: QuarantineFilter, count: number, note?: string) {
  const session = c.get('session');
  const hidden = Object.entries(filterParams(filter))
    .filter(([, v]) => v !== undefined)
    // the filter's `reason` (a finding reason) travels as reason_of_finding: `reason` is the dismissal's code
    .map(([k, v]) => html`<input type="hidden" name="${k === 'reason' ? 'reason_of_finding' : k}" value="${v}">`);
  const describe = Object.entries(filterParams(filter))
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k} = ${v}`)
    .join(', ');
  const body = html`${note ? html`<p class="error" role="alert">${note}</p>` : ''}
  <p>Filter: ${describe || 'every open finding your role can see'}.</p>
  <p><strong>${count}</strong> open findings match (counted now, a dry run: nothing was changed).</p>
  ${
    count === 0
      ? ''
      : count > DISMISS_ALL_MAX
        ? html`<p>That is more than ${DISMISS_ALL_MAX}: narrow the filter first.</p>`
        : html`<form method="post" action="/quarantine/dismiss-all"><input type="hidden" name="${CSRF_FIELD}" value="${session.csrf}">${hidden}
    <input type="hidden" name="count" value="${count}">
    <label for="reason">Reason<select id="reason" name="reason">${DISMISS_REASONS.map((r) => html`<option value="${r}">${r}</option>`)}</select></label>
    <p><button type="submit" class="danger">Confirm</button> dismissing all ${count}, in batches of ${DISMISS_BATCH}, one audit row each.</p></form>`
  }
  <p><a href="/quarantine${queryString(filterParams(filter))}">Back to the quarantine</a></p>`;
  return c.html(layout({ title: 'Dismiss all matching', session, current: '/quarantine', body }).text);
}

/** GET /quarantine/dismiss-all: the dry run: how many findings the filter matches, and Confirm. */
export async function dismissAllPage(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const { filter, problems } = parseQuarantineFilter(c.req.query());
  if (problems.length > 0) return c.html(problemPage('Dismiss all matching', problems.join('; '), c.get('session')), 400);
  const count = await countMatching(c.get('session').sql, schemaOf(deps), filter, new Date(deps.now()));
  return confirmPage(c, filter, count);
}

/**
 * POST /quarantine/dismiss-all: counts again and, when the count is still the confirmed one,
 * dismisses that many matching findings through dismiss_quarantined() as the user, DISMISS_BATCH
 * per transaction (the feed's pages wait for at most one batch), oldest first.
 */
export async function dismissAll(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const session = c.get('session');
  const schema = schemaOf(deps);
  const form = await c.req.parseBody();
  const text = (k: string) => (typeof form[k] === 'string' ? (form[k] as string) : undefined);
  const { filter, problems } = parseQuarantineFilter({
    feed: text('feed'),
    reason: text('reason_of_finding'),
    event_name: text('event_name'),
    age: text('age'),
    q: text('q'),
  });
  const reason = text('reason') ?? '';
  const confirmed = Number(text('count'));
  if (problems.length > 0 || !(DISMISS_REASONS as readonly string[]).includes(reason) || !Number.isInteger(confirmed) || confirmed < 1) {
    return c.html(problemPage('Dismiss all matching', 'The confirmation was incomplete: start again from the quarantine.', session), 400);
  }
  const now = new Date(deps.now());
  const count = await countMatching(session.sql, schema, filter, now);
  if (count !== confirmed) return confirmPage(c, filter, count, `The count changed from ${confirmed} to ${count}: confirm again.`);
  if (count > DISMISS_ALL_MAX) return confirmPage(c, filter, count);
  const { where, params } = filterClause(filter, schema, now);
  let dismissed = 0;
  try {
    while (dismissed < confirmed) {
      const batch = Math.min(DISMISS_BATCH, confirmed - dismissed);
      const done = await session.sql.begin(async (tx) => {
        const keys = await tx.unsafe<{ feed: string; quarantine_key: string }[]>(
          `select q.feed, q.quarantine_key from ${schema}.quarantine_open q where ${where} order by q.held_since, q.feed, q.quarantine_key limit ${batch}`,
          params as never[],
        );
        for (const k of keys) await tx.unsafe(`select ${schema}.dismiss_quarantined($1, $2, $3, true)`, [k.feed, k.quarantine_key, reason]);
        return keys.length;
      });
      dismissed += done;
      if (done < batch) break;
    }
  } catch (error) {
    const problem = sqlProblem(error);
    deps.log.warn({ event: 'console.dismiss_all_failed', code: (error as { code?: string }).code, dismissed }, 'dismiss all stopped');
    return c.html(problemPage('Dismiss all matching', `Stopped after ${dismissed} dismissed: ${problem.message}`, session), problem.status);
  }
  deps.log.info({ event: 'console.dismiss_all', role: session.role, dismissed }, 'dismissed all matching');
  session.flash = `Dismissed ${dismissed} findings (${reason}).`;
  return c.redirect(`/quarantine${queryString(filterParams(filter))}`, 303);
}

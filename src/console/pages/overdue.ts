import type { Context } from 'hono';
import { asUser, type ConsoleDeps, type ConsoleEnv } from '../context.js';
import { formatAge, formatCapped, formatTime } from '../format.js';
import { html, queryString } from '../html.js';
import { layout } from '../layout.js';
import { prescriptionHref } from '../links.js';
import { FEED_NAME_PATTERN } from '../../db/feed-name.js';
import { OVERDUE_STAGES } from '../../store-api/overdue/stages.js';
import { overdueCountsByStage, overdueOldestFirst } from '../../store-api/overdue/overdue-prescriptions.js';

/** The stages overdue_prescriptions reports (docs/sql-api/overdue.md), in lifecycle order. */
export const OVERDUE_STAGE_ORDER = OVERDUE_STAGES;
const FEED = FEED_NAME_PATTERN;
const LIMIT = 200;
/**
 * The Feeds page's counts (open findings by reason, overdue by stage) stop at this many and then say
 * "more than": counting every one grew with the backlog (issue 34 §6). The same bound as the
 * quarantine list's total (TOTAL_AT_MOST); feed_overview's open_findings_capped has it written in.
 */
export const COUNTED_AT_MOST = 1000;

/** Pure: the filter from the query string; anything but a known feed name or stage is left out. */
export function overdueFilter(query: { feed?: string | undefined; stage?: string | undefined }): { feed?: string; stage?: string } {
  const feed = query.feed && FEED.test(query.feed) ? query.feed : undefined;
  const stage = query.stage && (OVERDUE_STAGE_ORDER as readonly string[]).includes(query.stage) ? query.stage : undefined;
  return { ...(feed ? { feed } : {}), ...(stage ? { stage } : {}) };
}

/** Per feed, the overdue count of each stage, up to COUNTED_AT_MOST + 1 (overdue_counts: the role's own feeds). */
export async function overdueCounts(c: Context<ConsoleEnv>, deps: ConsoleDeps): Promise<Map<string, Map<string, number>>> {
  const rows = await overdueCountsByStage(asUser(c, deps), COUNTED_AT_MOST);
  const counts = new Map<string, Map<string, number>>();
  for (const r of rows) {
    if (!counts.has(r.feed)) counts.set(r.feed, new Map());
    counts.get(r.feed)?.set(r.stage, r.n);
  }
  return counts;
}

/** The Feeds page's cell: each stage with prescriptions past its deadline, linking to the list. */
export function overdueCell(feed: string, counts: Map<string, number> | undefined) {
  const stages = OVERDUE_STAGE_ORDER.filter((stage) => (counts?.get(stage) ?? 0) > 0);
  if (stages.length === 0) return html`none`;
  return stages.map(
    (stage) =>
      html`<a href="/overdue${queryString({ feed, stage })}">${stage}: ${formatCapped(counts?.get(stage) ?? 0, COUNTED_AT_MOST)}</a><br>`,
  );
}

/** GET /overdue: prescriptions past their stage deadline (overdue_prescriptions), oldest first; no PHI. */
export async function overduePage(c: Context<ConsoleEnv>, deps: ConsoleDeps) {
  const session = c.get('session');
  const filter = overdueFilter({ feed: c.req.query('feed'), stage: c.req.query('stage') });
  const rows = await overdueOldestFirst(asUser(c, deps), filter, LIMIT);
  const title = `Overdue${filter.stage ? `: ${filter.stage}` : ''}${filter.feed ? ` in ${filter.feed}` : ''}`;
  const body = html`<p>Prescriptions whose stage has lasted longer than its feed's deadline (OVERDUE_*), oldest
  first${rows.length === LIMIT ? html`, the first ${LIMIT}` : ''}. The runbook's "Overdue prescriptions" says what to check with the operator.</p>
  ${
    rows.length === 0
      ? html`<p>None overdue.</p>`
      : html`<div class="table-scroll" role="region" aria-label="Overdue prescriptions" tabindex="0"><table><thead><tr><th scope="col">External id</th><th scope="col">Feed</th><th scope="col">Stage</th><th scope="col">Since</th><th scope="col">Overdue by</th></tr></thead><tbody>
    ${rows.map((r) => html`<tr><td><a href="${prescriptionHref(r.feed, r.external_id)}">${r.external_id}</a></td><td>${r.feed}</td><td>${r.stage}</td><td>${formatTime(r.since)}</td><td>${formatAge(r.overdue_seconds * 1000)}</td></tr>`)}
    </tbody></table></div>`
  }`;
  return c.html(layout({ title, session, current: '/', body }).text);
}

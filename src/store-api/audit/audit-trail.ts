import { qualified, rowLimit, type RunnerSource, runnerOf } from '../runner.js';

/** A row of audit_trail (sql/api/audit/audit_trail.sql): identifiers and counts, never PHI. */
export interface AuditRow {
  /** the row's number within its feed (0032): unique with the feed, no order across feeds */
  id: string;
  /** `at` in microseconds since the epoch, as text: the page position (a JS Date cuts microseconds) */
  at_micros: string;
  at: Date;
  actor: string;
  on_behalf_of: string | null;
  action: string;
  feed: string | null;
  subject: string | null;
  detail: unknown;
}

/**
 * Where the next (older) page starts: the last row's time in microseconds since the epoch, its feed
 * ('' for none) and its id. audit_trail's ids count within their feed (0032), so a page of several
 * feeds is ordered by time, then feed, then id.
 */
export interface AuditPosition {
  atMicros: string;
  feed: string;
  id: string;
}

/** What an audit page is narrowed to; every value a bound parameter. */
export interface AuditFilter {
  action?: string | undefined;
  feed?: string | undefined;
  actor?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  /** only rows after this position in the page order (the page before ended there) */
  before?: AuditPosition | undefined;
}

/** The audit rows the role may read, newest first, at most `limit`. */
export async function auditTrail(source: RunnerSource, filter: AuditFilter, limit: number): Promise<AuditRow[]> {
  const runner = runnerOf(source);
  const parts: string[] = [];
  const params: unknown[] = [];
  const add = (clause: (p: string) => string, value: unknown) => {
    params.push(value);
    parts.push(clause(`$${params.length}`));
  };
  if (filter.action) add((p) => `action = ${p}`, filter.action);
  if (filter.feed) add((p) => `feed = ${p}`, filter.feed);
  if (filter.actor) add((p) => `actor = ${p}`, filter.actor);
  if (filter.from) add((p) => `at >= ${p}::timestamptz`, filter.from.toISOString());
  if (filter.to) add((p) => `at < ${p}::timestamptz`, filter.to.toISOString());
  if (filter.before) {
    const { atMicros, feed, id } = filter.before;
    params.push(atMicros, feed, id);
    const n = params.length;
    parts.push(
      `(at, coalesce(feed, ''), id) < ('epoch'::timestamptz + $${n - 2}::bigint * interval '1 microsecond', $${n - 1}::text, $${n}::bigint)`,
    );
  }
  return runner.query<AuditRow>(
    `select id, (extract(epoch from at) * 1000000)::bigint::text as at_micros, at, actor, on_behalf_of, action, feed, subject, detail
     from ${qualified(runner, 'audit_trail')}
     where ${parts.length ? parts.join(' and ') : 'true'} order by at desc, coalesce(feed, '') desc, id desc limit ${rowLimit(limit)}`,
    params,
  );
}

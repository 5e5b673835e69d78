import { qualified, rowLimit, type RunnerSource, runnerOf } from '../runner.js';

/** A row of audit_trail (sql/api/audit/audit_trail.sql): identifiers and counts, never PHI. */
export interface AuditRow {
  id: string;
  at: Date;
  actor: string;
  on_behalf_of: string | null;
  action: string;
  feed: string | null;
  subject: string | null;
  detail: unknown;
}

/** What an audit page is narrowed to; every value a bound parameter. */
export interface AuditFilter {
  action?: string | undefined;
  feed?: string | undefined;
  actor?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  /** only rows older than this id (the page before) */
  before?: string | undefined;
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
  if (filter.before) add((p) => `id < ${p}::bigint`, filter.before);
  return runner.query<AuditRow>(
    `select id, at, actor, on_behalf_of, action, feed, subject, detail from ${qualified(runner, 'audit_trail')}
     where ${parts.length ? parts.join(' and ') : 'true'} order by id desc limit ${rowLimit(limit)}`,
    params,
  );
}

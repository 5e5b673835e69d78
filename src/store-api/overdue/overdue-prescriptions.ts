import { qualified, rowLimit, type RunnerSource, runnerOf } from '../runner.js';

/** A prescription past its stage deadline (overdue_prescriptions, sql/api/overdue/). */
export interface OverdueRow {
  feed: string;
  external_id: string;
  stage: string;
  since: Date;
  overdue_seconds: number;
}

/**
 * Per feed and stage, how many prescriptions are overdue (the role's own feeds), each counted up to
 * `atMost + 1` (overdue_counts): a count above `atMost` means "more than atMost". A (feed, stage) with
 * none overdue has no row.
 */
export async function overdueCountsByStage(source: RunnerSource, atMost: number): Promise<{ feed: string; stage: string; n: number }[]> {
  const runner = runnerOf(source);
  return runner.query(`select feed, stage, n from ${qualified(runner, 'overdue_counts')}($1::integer)`, [rowLimit(atMost)]);
}

/** Overdue prescriptions, oldest first, at most `limit` (overdue_page): of a feed and a stage when given. */
export async function overdueOldestFirst(
  source: RunnerSource,
  filter: { feed?: string | undefined; stage?: string | undefined },
  limit: number,
): Promise<OverdueRow[]> {
  const runner = runnerOf(source);
  return runner.query<OverdueRow>(
    `select feed, external_id, stage, since, extract(epoch from overdue_by)::float8 as overdue_seconds
     from ${qualified(runner, 'overdue_page')}($1::text, $2::text, $3::integer)`,
    [filter.feed ?? null, filter.stage ?? null, rowLimit(limit)],
  );
}

/** Overdue prescriptions, longest overdue first: of one feed, or of every feed the role may read (null). */
export async function overdueLongestFirst(
  source: RunnerSource,
  feed: string | null,
): Promise<{ feed: string; external_id: string; stage: string; since: Date; overdue_by_seconds: number }[]> {
  const runner = runnerOf(source);
  const rows = await runner.query<{ feed: string; external_id: string; stage: string; since: Date; overdue_by_seconds: string | number }>(
    `select feed, external_id, stage, since, extract(epoch from overdue_by)::bigint as overdue_by_seconds
       from ${qualified(runner, 'overdue_prescriptions')} where $1::text is null or feed = $1::text
       order by overdue_by desc, feed, external_id`,
    [feed],
  );
  return rows.map((r) => ({ ...r, overdue_by_seconds: Number(r.overdue_by_seconds) }));
}

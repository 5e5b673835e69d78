import { qualified, rowLimit, type RunnerSource, runnerOf } from '../runner.js';

/** A prescription past its stage deadline (overdue_prescriptions, sql/api/overdue/). */
export interface OverdueRow {
  feed: string;
  external_id: string;
  stage: string;
  since: Date;
  overdue_seconds: number;
}

/** Per feed and stage, how many prescriptions are overdue (the role's own feeds: the view filters them). */
export async function overdueCountsByStage(source: RunnerSource): Promise<{ feed: string; stage: string; n: number }[]> {
  const runner = runnerOf(source);
  return runner.query(`select feed, stage, count(*)::int as n from ${qualified(runner, 'overdue_prescriptions')} group by feed, stage`);
}

/** Overdue prescriptions, oldest first, at most `limit`: of a feed and a stage when given. */
export async function overdueOldestFirst(
  source: RunnerSource,
  filter: { feed?: string | undefined; stage?: string | undefined },
  limit: number,
): Promise<OverdueRow[]> {
  const runner = runnerOf(source);
  return runner.query<OverdueRow>(
    `select feed, external_id, stage, since, extract(epoch from overdue_by)::float8 as overdue_seconds
     from ${qualified(runner, 'overdue_prescriptions')}
     where ($1::text is null or feed = $1) and ($2::text is null or stage = $2)
     order by since limit ${rowLimit(limit)}`,
    [filter.feed ?? null, filter.stage ?? null],
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

import { qualified, type RunnerSource, runnerOf } from '../runner.js';
import { OVERDUE_STAGES, type StageDeadlines } from './stages.js';

/**
 * Writes each feed's stage deadlines to feed_deadlines (read by overdue_prescriptions), replacing
 * what an earlier start wrote for those feeds, in one transaction. `off` is stored as a null deadline.
 */
export async function writeFeedDeadlines(
  source: RunnerSource,
  feeds: ReadonlyArray<{ feed: string; deadlines: StageDeadlines }>,
): Promise<void> {
  await runnerOf(source).transaction(async (tx) => {
    for (const { feed, deadlines } of feeds) {
      for (const stage of OVERDUE_STAGES) {
        const ms = deadlines[stage];
        await tx.query(
          `insert into ${qualified(tx, 'feed_deadlines')} (feed, stage, deadline, updated_at)
           values ($1::text, $2::text, $3::text::interval, now())
           on conflict (feed, stage) do update set deadline = excluded.deadline, updated_at = now()`,
          [feed, stage, ms === null ? null : `${ms} milliseconds`],
        );
      }
    }
  });
}

import { sql } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { namesOf } from '../../db/store-names.js';
import { OVERDUE_STAGES, type StageDeadlines } from './overdue-stages.js';

/**
 * Writes each feed's stage deadlines to feed_deadlines (read by overdue_prescriptions), replacing
 * what an earlier start wrote for those feeds, in one transaction. `off` is stored as a null deadline.
 */
export async function writeFeedDeadlines(db: Db, feeds: ReadonlyArray<{ feed: string; deadlines: StageDeadlines }>): Promise<void> {
  const table = namesOf(db).feedDeadlines;
  await db.transaction(async (tx) => {
    for (const { feed, deadlines } of feeds) {
      for (const stage of OVERDUE_STAGES) {
        const ms = deadlines[stage];
        await tx.execute(
          sql`insert into ${table} (feed, stage, deadline, updated_at)
              values (${feed}::text, ${stage}::text, ${ms === null ? null : `${ms} milliseconds`}::interval, now())
              on conflict (feed, stage) do update set deadline = excluded.deadline, updated_at = now()`,
        );
      }
    }
  });
}

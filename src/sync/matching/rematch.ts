import { sql } from 'drizzle-orm';
import { namesOf } from '../../db/store-names.js';
import { queryRows, type Db } from '../../db/connection.js';

export interface RematchResult {
  examined: number;
  matched: number;
  stillUnmatched: number;
  stillAmbiguous: number;
}

/**
 * Re-evaluates every open unmatched/ambiguous finding (of one feed, or of every feed when none is given) against the local prescriptions, set-based,
 * in one transaction: the SQL API's rematch_held() (sql/current-schema.sql), which takes
 * the match lock exclusively and applies the page apply's rule. Single matches link their event,
 * advance the prescription's status (never backwards) and resolve the finding; the rest keep or
 * change their reason.
 */
export async function rematch(db: Db, scope: { feed?: string | undefined } = {}): Promise<RematchResult> {
  const [row] = await queryRows<{ examined: number; matched: number; still_unmatched: number; still_ambiguous: number }>(
    db,
    sql`select examined, matched, still_unmatched, still_ambiguous
        from ${namesOf(db).qualified('rematch_held')}(null, null, ${scope.feed ?? null}::text)`,
  );
  return {
    examined: row?.examined ?? 0,
    matched: row?.matched ?? 0,
    stillUnmatched: row?.still_unmatched ?? 0,
    stillAmbiguous: row?.still_ambiguous ?? 0,
  };
}

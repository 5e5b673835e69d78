import { sql } from 'drizzle-orm';
import { osActor, recordAudit, setAuditActor } from '../../db/audit.js';
import { namesOf, type StoreNames } from '../../db/store-names.js';
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
export async function rematch(
  db: Db,
  scope: { feed?: string | undefined } = {},
  audit?: { onBehalfOf?: string | undefined },
): Promise<RematchResult> {
  const n = namesOf(db);
  if (!audit) return rematchOn(db, n, scope.feed ?? null);
  // `rematch` run by an operator: audited in the rematch's own transaction, with who ran it
  return db.transaction(async (tx) => {
    await setAuditActor(tx, audit.onBehalfOf ?? osActor());
    const result = await rematchOn(tx, n, scope.feed ?? null);
    await recordAudit(
      tx,
      n,
      { action: 'quarantine.rematch', feed: scope.feed ?? null, detail: { ...result } },
      audit.onBehalfOf ?? osActor(),
    );
    return result;
  });
}

async function rematchOn(db: Pick<Db, 'execute'>, n: StoreNames, feed: string | null): Promise<RematchResult> {
  const [row] = await queryRows<{ examined: number; matched: number; still_unmatched: number; still_ambiguous: number }>(
    db,
    sql`select examined, matched, still_unmatched, still_ambiguous
        from ${n.qualified('rematch_held')}(null, null, ${feed}::text)`,
  );
  return {
    examined: row?.examined ?? 0,
    matched: row?.matched ?? 0,
    stillUnmatched: row?.still_unmatched ?? 0,
    stillAmbiguous: row?.still_ambiguous ?? 0,
  };
}

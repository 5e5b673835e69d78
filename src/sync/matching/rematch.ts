import { sql } from 'drizzle-orm';
import type { StoreNames } from '../../db/store-names.js';
import { queryRows, type Db } from '../../db/connection.js';

// rematch_held() over a set of identity keys, as the registration of a prescription (local, or sent
// through the outbox) runs it for the keys it touched. The batched rematch of every held event
// (`quarantine rematch`) is src/operations/matching/rematch-held.ts.

export interface RematchResult {
  examined: number;
  matched: number;
  stillUnmatched: number;
  stillAmbiguous: number;
}

/** Adds `b`'s counts to `a` (in place) and returns it. */
export function addRematch(a: RematchResult, b: RematchResult): RematchResult {
  a.examined += b.examined;
  a.matched += b.matched;
  a.stillUnmatched += b.stillUnmatched;
  a.stillAmbiguous += b.stillAmbiguous;
  return a;
}

/** rematch_held() of the held events with these identity keys (and erx ids), on `db` or a transaction. */
export async function rematchKeys(
  db: Pick<Db, 'execute'>,
  names: StoreNames,
  keys: readonly string[],
  erxIds: readonly string[],
  feed: string | null,
): Promise<RematchResult> {
  const [row] = await queryRows<{ examined: number; matched: number; still_unmatched: number; still_ambiguous: number }>(
    db,
    sql`select examined, matched, still_unmatched, still_ambiguous
        from ${names.qualified('rematch_held')}(
          array(select jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb)),
          array(select jsonb_array_elements_text(${JSON.stringify(erxIds)}::jsonb)),
          ${feed}::text)`,
  );
  return {
    examined: row?.examined ?? 0,
    matched: row?.matched ?? 0,
    stillUnmatched: row?.still_unmatched ?? 0,
    stillAmbiguous: row?.still_ambiguous ?? 0,
  };
}

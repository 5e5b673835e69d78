import { sql } from 'drizzle-orm';
import { queryRows, type Db } from '../../db/connection.js';
import { namesOf } from '../../db/store-names.js';
import { addRematch, type RematchResult } from '../../sync/matching/rematch.js';
import { nextHeldKeys, REMATCH_BATCH_KEYS } from './rematch-held.js';

/** A held event a rematch would apply, and to which local prescription: identifiers only. */
export interface WouldMatch {
  event_id: string;
  external_id: string;
}

export interface RematchPreviewOptions {
  feed?: string | undefined;
  batchSize?: number;
  /** each held event that would match, as found (streamed: a large quarantine is not held in memory) */
  onMatch?: (match: WouldMatch) => void;
}

/**
 * What `rematch` would do, read-only: the same walk over the held events' identity keys and the same
 * match rule (_match_prescription), without the match lock and without writing. A forecast: a page
 * or a registration committing meanwhile can change the outcome of the real run.
 */
export async function previewRematch(db: Db, options: RematchPreviewOptions = {}): Promise<RematchResult> {
  const names = namesOf(db);
  const feed = options.feed ?? null;
  const batchSize = options.batchSize ?? REMATCH_BATCH_KEYS;
  const total: RematchResult = { examined: 0, matched: 0, stillUnmatched: 0, stillAmbiguous: 0 };
  let after: string | null = null;
  for (;;) {
    const keys = await nextHeldKeys(db, names, feed, after, batchSize);
    if (keys.length === 0) break;
    after = keys[keys.length - 1] ?? null;
    const rows = await queryRows<{ event_id: string; candidates: number; external_id: string | null }>(
      db,
      sql`select e.id as event_id, m.candidates, p.external_id
          from ${names.events} e
          join ${names.quarantine} q on q.feed = e.feed and q.quarantine_key = e.id
          cross join lateral ${names.qualified('_match_prescription')}(e.identity_key, e.erx_message_id, e.feed, e.subscription_id) m
          left join ${names.prescriptions} p on p.id = m.prescription_id
          where e.prescription_id is null
            and e.identity_key = any(array(select jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb)))
            and (${feed}::text is null or e.feed = ${feed}::text)
            and q.resolved_at is null and q.reason in ('unmatched', 'ambiguous')
          order by e.feed, e.id`,
    );
    const batch: RematchResult = { examined: rows.length, matched: 0, stillUnmatched: 0, stillAmbiguous: 0 };
    for (const row of rows) {
      if (row.candidates === 1 && row.external_id !== null) {
        batch.matched++;
        options.onMatch?.({ event_id: row.event_id, external_id: row.external_id });
      } else if (row.candidates === 0) batch.stillUnmatched++;
      else batch.stillAmbiguous++;
    }
    addRematch(total, batch);
    if (keys.length < batchSize) break;
  }
  return total;
}

import { sql, type SQL } from 'drizzle-orm';
import type { StoreNames } from '../../db/store-names.js';

/**
 * The match rule of matchCandidates() in SQL, as a lateral join for a row source aliased `ev`
 * with columns identity_key and erx_message_id. The rule itself is ONE SQL function,
 * `_match_prescription` (sql/current-schema.sql), which rematch_held() uses too; it is
 * inlined into the calling statement, so every branch stays an index lookup and the size of the
 * local prescription table barely matters. Yields `m.prescription_id`, `m.candidates`,
 * `m.quarantine_reason` and `m.quarantine_detail` (see matchDecisionColumns). `feed` is the events'
 * feed (a text expression): only that feed's prescriptions are candidates.
 */
export const matchCandidatesLateral = (n: StoreNames, feed: SQL): SQL =>
  sql`left join lateral ${n.qualified('_match_prescription')}(ev.identity_key, ev.erx_message_id, ${feed}) m on true`;

/**
 * decideMatch() over the lateral's `m`: `prescription_id` when exactly one candidate, else
 * `quarantine_reason` ('unmatched' | 'ambiguous') and `quarantine_detail` naming at most five
 * candidate external ids, never patient fields.
 */
export const matchDecisionColumns = sql.raw('m.prescription_id, m.quarantine_reason, m.quarantine_detail');

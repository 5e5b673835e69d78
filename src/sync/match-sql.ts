import { sql, type SQL } from 'drizzle-orm';
import type { StoreNames } from '../db/store-names.js';

/**
 * The match rule of matchCandidates() in SQL, as a lateral join for a row source
 * aliased `ev` with columns identity_key and erx_message_id. Yields `m.ids` (text[]
 * of prescription ids ordered by id, null when none) and `m.external_ids` in the
 * same order. Every branch is an index lookup, so the size of the local
 * prescription table barely matters.
 */
export const matchCandidatesLateral = (n: StoreNames): SQL => sql`left join lateral (
  select array_agg(c.id::text order by c.id) as ids, array_agg(c.external_id order by c.id) as external_ids
  from (
    select p.id, p.external_id from ${n.prescriptions} p
    where ev.erx_message_id is not null and p.erx_message_id = ev.erx_message_id
    union all
    select p.id, p.external_id from ${n.prescriptions} p
    where p.identity_key = ev.identity_key
      and (ev.erx_message_id is null or p.erx_message_id is null)
      and not exists (
        select 1 from ${n.prescriptions} x where ev.erx_message_id is not null and x.erx_message_id = ev.erx_message_id
      )
  ) c
) m on true`;

/** At most this many candidate external ids are named in an ambiguous finding. */
const AMBIGUOUS_IDS_SHOWN = 5;

/**
 * decideMatch() over the lateral's `m` (the two branches never yield an id twice):
 * `prescription_id` when exactly one candidate, else `quarantine_reason`
 * ('unmatched' | 'ambiguous') and `quarantine_detail` naming at most
 * AMBIGUOUS_IDS_SHOWN candidate external ids, never patient fields.
 */
export const matchDecisionColumns = sql.raw(`case when cardinality(m.ids) = 1 then m.ids[1]::bigint end as prescription_id,
  case when m.ids is null then 'unmatched' when cardinality(m.ids) > 1 then 'ambiguous' end as quarantine_reason,
  case when m.ids is null then 'no local prescription matches its identity'
    when cardinality(m.ids) > 1 then cardinality(m.ids) || ' local prescriptions match (external_id '
      || array_to_string(m.external_ids[1:${AMBIGUOUS_IDS_SHOWN}], ', ')
      || case when cardinality(m.ids) > ${AMBIGUOUS_IDS_SHOWN} then ', ...' else '' end || ')'
  end as quarantine_detail`);

import { sql } from 'drizzle-orm';

/**
 * The match rule of matchCandidates() in SQL, as a lateral join for a row source
 * aliased `ev` with columns identity_key and erx_message_id. Yields `m.ids` (text[]
 * of prescription ids, null when none) and `m.external_ids`. Every branch is an
 * index lookup, so the size of the local prescription table barely matters.
 */
export const matchCandidatesLateral = sql`left join lateral (
  select array_agg(c.id::text order by c.id) as ids, array_agg(c.external_id order by c.id) as external_ids
  from (
    select p.id, p.external_id from prescriptions p
    where ev.erx_message_id is not null and p.erx_message_id = ev.erx_message_id
    union all
    select p.id, p.external_id from prescriptions p
    where p.identity_key = ev.identity_key
      and (ev.erx_message_id is null or p.erx_message_id is null)
      and not exists (
        select 1 from prescriptions x where ev.erx_message_id is not null and x.erx_message_id = ev.erx_message_id
      )
  ) c
) m on true`;

/** Candidate ids as numbers from the text[] the lateral yields. */
export function candidateIds(ids: readonly string[] | null | undefined): number[] {
  return (ids ?? []).map(Number);
}

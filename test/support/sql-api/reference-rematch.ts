import { sql, type SQL } from 'drizzle-orm';
import type { StoreNames } from '../../../src/db/store-names.js';

// The TypeScript rematch path as it was before the rule moved into rematch_held() and
// _match_prescription() (src/sync/rematch.ts and match-sql.ts at 5c2aae1), frozen here as the
// reference the SQL function is compared with. Not used by the product.

const matchCandidatesLateral = (n: StoreNames): SQL => sql`left join lateral (
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

const matchDecisionColumns = sql.raw(`case when cardinality(m.ids) = 1 then m.ids[1]::bigint end as prescription_id,
  case when m.ids is null then 'unmatched' when cardinality(m.ids) > 1 then 'ambiguous' end as quarantine_reason,
  case when m.ids is null then 'no local prescription matches its identity'
    when cardinality(m.ids) > 1 then cardinality(m.ids) || ' local prescriptions match (external_id '
      || array_to_string(m.external_ids[1:5], ', ')
      || case when cardinality(m.ids) > 5 then ', ...' else '' end || ')'
  end as quarantine_detail`);

/** The old rematch statement: its row has examined, matched, still_unmatched, still_ambiguous. */
export const referenceRematchSql = (n: StoreNames): SQL => sql`with ev as (
    select q.id as quarantine_id, e.id, e.identity_key, e.erx_message_id, e.name, e.occurred_at, e.status_rank
    from ${n.quarantine} q join ${n.events} e on e.id = q.event_id
    where q.resolved_at is null and q.reason in ('unmatched', 'ambiguous') and e.prescription_id is null
  ),
  evaluated as (
    select ev.*, m.ids, ${matchDecisionColumns}, coalesce(cardinality(m.ids), 0) as n
    from ev ${matchCandidatesLateral(n)}
  ),
  linked as (
    update ${n.events} e set prescription_id = v.prescription_id
    from evaluated v where e.id = v.id and v.n = 1
    returning e.id
  ),
  best as (
    select distinct on (ids[1]) (ids[1])::bigint as prescription_id, id, name, occurred_at, status_rank
    from evaluated
    where n = 1 and status_rank is not null
    order by ids[1], status_rank desc, occurred_at desc, id desc
  ),
  advanced as (
    update ${n.prescriptions} p
    set status = b.name, status_rank = b.status_rank, status_occurred_at = b.occurred_at, status_event_id = b.id, updated_at = now()
    from best b
    where p.id = b.prescription_id and b.status_rank > p.status_rank
    returning p.id
  ),
  resolved as (
    update ${n.quarantine} q set resolved_at = now()
    from evaluated v where q.id = v.quarantine_id and v.n = 1
    returning q.id
  ),
  reclassified as (
    update ${n.quarantine} q
    set reason = v.quarantine_reason, detail = v.quarantine_detail
    from evaluated v where q.id = v.quarantine_id and v.n <> 1
    returning q.id
  )
  select count(*)::int as examined,
    count(*) filter (where n = 1)::int as matched,
    count(*) filter (where n = 0)::int as still_unmatched,
    count(*) filter (where n > 1)::int as still_ambiguous,
    (select count(*)::int from linked) + (select count(*)::int from advanced)
      + (select count(*)::int from resolved) + (select count(*)::int from reclassified) as rows_written
  from evaluated`;

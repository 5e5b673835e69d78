import { sql, type SQL } from 'drizzle-orm';
import type { StoreNames } from '../db/store-names.js';
import { namesOf } from '../db/store-names.js';
import { queryRows, type Db } from '../db/connection.js';
import { matchLockExclusive } from './match-lock.js';
import { matchCandidatesLateral, matchDecisionColumns } from './match-sql.js';

export interface RematchResult {
  examined: number;
  matched: number;
  stillUnmatched: number;
  stillAmbiguous: number;
}

/**
 * Open unmatched/ambiguous findings evaluated again with the page-apply rule, in
 * one statement: single matches link their event, advance the prescription's status
 * (never backwards) and resolve the finding; the rest keep or change their reason.
 */
const rematchSql = (n: StoreNames): SQL => sql`with ev as (
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
    -- the same reason and wording as a page apply gives (match-sql.ts)
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

/** Re-evaluates open unmatched/ambiguous quarantine against local prescriptions (set-based, one transaction). */
export async function rematch(db: Db): Promise<RematchResult> {
  const n = namesOf(db);
  return db.transaction(async (tx) => {
    await tx.execute(sql`select 1 from (select ${matchLockExclusive(n)}) as match_lock`);
    const [row] = await queryRows<{ examined: number; matched: number; still_unmatched: number; still_ambiguous: number }>(tx, rematchSql(n));
    return {
      examined: row?.examined ?? 0,
      matched: row?.matched ?? 0,
      stillUnmatched: row?.still_unmatched ?? 0,
      stillAmbiguous: row?.still_ambiguous ?? 0,
    };
  });
}

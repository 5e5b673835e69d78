import { sql, type SQL } from 'drizzle-orm';
import { matchLockShared } from './match-lock.js';
import { matchCandidatesLateral } from './match-sql.js';

// Each page costs a constant number of statements whatever its size: the page
// travels as ONE json parameter expanded server-side by json_to_recordset (json, not
// jsonb: events.raw stores each body's text, so nothing parses it into jsonb but the payload).

/**
 * Compare-and-set of the checkpoint, first thing in the page's transaction: it
 * locks the row (a second worker queues here) and yields no row when the version
 * moved. Also takes the match lock in shared mode (see match-lock.ts).
 */
export function casCheckpointSql(feed: string, expectedVersion: number, nextIterator: string): SQL {
  return sql`with cas as (
    update feed_checkpoints
    set iterator = ${nextIterator}::text, version = version + 1, updated_at = now(), pages_applied = pages_applied + 1
    where feed = ${feed}::text and version = ${expectedVersion}::bigint
    returning version
  )
  select cas.version from cas cross join lateral (select ${matchLockShared}) as match_lock`;
}

/** Candidate prescriptions per event; `eventsJson` is an array of {id, identity_key, erx_message_id}. */
export function matchPageSql(eventsJson: string): SQL {
  return sql`select ev.id, m.ids, m.external_ids
  from jsonb_to_recordset(${eventsJson}::jsonb) as ev(id text, identity_key text, erx_message_id text)
  ${matchCandidatesLateral}`;
}

export interface WritePageParams {
  feed: string;
  receivedAt: string;
  /** rows: id, name, occurred_at, subscription_id, api_version, identity_key, erx_message_id, status_rank, prescription_id, quarantine_reason, quarantine_detail, raw */
  eventsJson: string;
  /** rows: key, event_id, detail, raw */
  malformedJson: string;
  malformedCount: number;
}

/**
 * Inserts the page's events (ids already in history are skipped), advances the
 * statuses of the prescriptions they matched, quarantines what cannot be applied
 * and adds the totals to the checkpoint: one statement, one row of counts back.
 */
export function writePageSql(p: WritePageParams): SQL {
  return sql`with page as materialized (
    select * from json_to_recordset(${p.eventsJson}::json) as r(
      id text, name text, occurred_at timestamptz, subscription_id text, api_version text, identity_key text,
      erx_message_id text, status_rank integer, prescription_id bigint, quarantine_reason text, quarantine_detail text, raw json)
  ),
  inserted as (
    insert into events (id, feed, name, occurred_at, subscription_id, api_version, payload, raw, identity_key,
      erx_message_id, status_rank, prescription_id, received_at)
    select id, ${p.feed}::text, name, occurred_at, subscription_id, api_version, (raw -> 'payload')::jsonb, raw, identity_key,
      erx_message_id, status_rank, prescription_id, ${p.receivedAt}::timestamptz
    from page
    on conflict (id) do nothing
    returning id, name, occurred_at, status_rank, prescription_id
  ),
  -- per prescription the highest rank wins; ties go to the later event, then the larger id
  best as (
    select distinct on (prescription_id) prescription_id, id, name, occurred_at, status_rank
    from inserted
    where prescription_id is not null and status_rank is not null
    order by prescription_id, status_rank desc, occurred_at desc, id desc
  ),
  advanced as (
    update prescriptions p
    set status = b.name, status_rank = b.status_rank, status_occurred_at = b.occurred_at, status_event_id = b.id,
      updated_at = ${p.receivedAt}::timestamptz
    from best b
    where p.id = b.prescription_id and b.status_rank > p.status_rank
    returning p.id
  ),
  new_findings as (
    select page.id, page.quarantine_reason, page.quarantine_detail, page.raw, inserted.prescription_id
    from page join inserted on inserted.id = page.id
  ),
  to_quarantine as (
    -- one row per key: a well-formed copy of an id beats a malformed copy in the same page
    select distinct on (quarantine_key) quarantine_key, event_id, reason, detail, raw,
      count(*) over (partition by quarantine_key)::int as copies
    from (
      select id as quarantine_key, id as event_id, quarantine_reason as reason, quarantine_detail as detail, raw::jsonb, 0 as precedence
      from new_findings where quarantine_reason is not null
      union all
      select m.key, m.event_id, 'malformed', m.detail, m.raw, 1
      from jsonb_to_recordset(${p.malformedJson}::jsonb) as m(key text, event_id text, detail text, raw jsonb)
    ) findings
    order by quarantine_key, precedence
  ),
  quarantined as (
    insert into quarantine as q (quarantine_key, event_id, feed, reason, detail, raw, first_seen_at, last_seen_at, seen_count)
    select quarantine_key, event_id, ${p.feed}::text, reason, detail, raw, ${p.receivedAt}::timestamptz, ${p.receivedAt}::timestamptz, copies
    from to_quarantine
    on conflict (quarantine_key) do update set
      last_seen_at = excluded.last_seen_at,
      seen_count = q.seen_count + excluded.seen_count,
      -- a malformed copy never overwrites what a well-formed copy of the same id established
      reason = case when excluded.reason = 'malformed' then q.reason else excluded.reason end,
      detail = case when excluded.reason = 'malformed' then q.detail else excluded.detail end,
      raw = case when excluded.reason = 'malformed' then q.raw else excluded.raw end,
      resolved_at = case when excluded.reason = 'malformed' then q.resolved_at else null end
    returning 1
  ),
  counts as (
    select count(*)::int as inserted,
      count(*) filter (where prescription_id is not null)::int as matched,
      count(*) filter (where quarantine_reason = 'unmatched')::int as unmatched,
      count(*) filter (where quarantine_reason = 'ambiguous')::int as ambiguous
    from new_findings
  ),
  totals as (
    update feed_checkpoints
    set events_applied = events_applied + counts.inserted,
      events_quarantined = events_quarantined + counts.unmatched + counts.ambiguous + ${p.malformedCount}::int
    from counts
    where feed = ${p.feed}::text
    returning 1
  )
  select counts.inserted, counts.matched, counts.unmatched, counts.ambiguous,
    (select count(*)::int from advanced) as status_changes,
    (select count(*)::int from quarantined) as quarantine_rows,
    (select count(*)::int from totals) as checkpoint_rows
  from counts`;
}

import { sql, type SQL } from 'drizzle-orm';
import type { StoreNames } from '../../db/store-names.js';
import { matchLockShared } from '../matching/match-lock.js';
import { matchCandidatesLateral } from '../matching/match-sql.js';

// A page is BEGIN, the match lock, ONE statement and COMMIT whatever its size: the page
// travels as ONE json parameter expanded server-side by json_to_recordset (json, not
// jsonb: events.raw stores each body's text and nothing parses it into jsonb). The payload is
// stored once, inside raw (raw -> 'payload'); events.payload is no longer written (issue 37, 0034).

/**
 * Takes the match lock in shared mode (see match-lock.ts). A statement of its own, sent
 * pipelined before applyPageSql: the lock must be held before the page statement takes
 * its snapshot, or a registration committing meanwhile would be invisible to its match.
 */
export const matchLockSharedSql = (n: StoreNames, feed: string): SQL =>
  sql`select 1 from (select ${matchLockShared(n, feed)}) as match_lock`;

export interface ApplyPageParams {
  feed: string;
  /** the checkpoint version the page was read at; nothing is written when it moved */
  expectedVersion: number;
  nextIterator: string;
  receivedAt: string;
  /** rows: id, name, occurred_at, subscription_id, api_version, identity_key, erx_message_id, status_rank, hold, hold_detail, raw */
  eventsJson: string;
  /** rows: key, event_id, detail, raw */
  malformedJson: string;
  malformedCount: number;
  /**
   * The base URL the page was read from. For the feed's checkpoint, the page applies only while no
   * OTHER source is the feed's current one (feed_sources): a worker still reading the old version
   * after `subscriptions migrate` recorded the new one writes nothing. Undefined: no such check.
   */
  readFrom?: string | undefined;
  /** set when the page was read from a draining source: its own position (feed_sources) is compared-and-set instead */
  draining?: boolean;
  /**
   * A page applied in parts (apply-page-in-parts.ts, after a statement Postgres refused for its data): each
   * part is `{ part: true }` and only checks the compare-and-set (the row stays locked, nothing moves);
   * the last statement moves the position once, adding what the parts applied (`carried`).
   */
  split?: { part: true } | { part: false; carried: { inserted: number; quarantined: number } };
}

/** The row applyPageSql returns: `version` is null when the checkpoint moved and nothing was written. */
export interface ApplyPageRow extends Record<string, unknown> {
  version: string | number | null;
  inserted: number;
  matched: number;
  unmatched: number;
  ambiguous: number;
  unsupported_version: number;
  status_changes: number;
}

/**
 * The whole page in one statement: locks the checkpoint row at the expected version
 * (a second worker queues here; a moved version yields no row and every write below
 * selects from nothing), matches each event, inserts the events (ids already in
 * history are skipped), advances the statuses of the prescriptions they matched,
 * quarantines what cannot be applied and advances the checkpoint with the totals.
 */
export function applyPageSql(n: StoreNames, p: ApplyPageParams): SQL {
  const readFrom = p.readFrom ?? null;
  if (p.draining && readFrom === null) throw new TypeError('a draining source page needs readFrom');
  // the hot statement's text is unchanged unless the page is applied in parts (it is prepared once per connection)
  const carried = p.split && !p.split.part ? p.split.carried : undefined;
  const plusInserted = carried ? sql` + ${carried.inserted}::int` : sql``;
  const plusQuarantined = carried ? sql` + ${carried.quarantined}::int` : sql``;
  // the position this page moves: the feed's checkpoint, or a draining source's own row (retired: no row)
  const cas = p.draining
    ? sql`select version from ${n.feedSources}
    where feed = ${p.feed}::text and base_url = ${readFrom}::text and state = 'draining' and version = ${p.expectedVersion}::bigint
    for update`
    : sql`select version from ${n.feedCheckpoints}
    where feed = ${p.feed}::text and version = ${p.expectedVersion}::bigint
      and (${readFrom}::text is null or not exists (
        select 1 from ${n.feedSources} s where s.feed = ${p.feed}::text and s.state = 'current' and s.base_url <> ${readFrom}::text))
    for update`;
  const checkpoint = p.split?.part
    ? sql`select version from cas`
    : p.draining
      ? sql`update ${n.feedSources} f
    set iterator = ${p.nextIterator}::text, version = f.version + 1, updated_at = now(), pages_applied = f.pages_applied + 1,
      events_applied = f.events_applied + counts.inserted${plusInserted}
    from cas, counts
    where f.feed = ${p.feed}::text and f.base_url = ${readFrom}::text
    returning f.version`
      : sql`update ${n.feedCheckpoints} f
    set iterator = ${p.nextIterator}::text, version = f.version + 1, updated_at = now(), pages_applied = f.pages_applied + 1,
      events_applied = f.events_applied + counts.inserted${plusInserted},
      events_quarantined = f.events_quarantined + counts.unmatched + counts.ambiguous + counts.unsupported_version + ${p.malformedCount}::int${plusQuarantined}
    from cas, counts
    where f.feed = ${p.feed}::text
    returning f.version`;
  return sql`with cas as materialized (
    ${cas}
  ),
  ev as materialized (
    select r.* from cas cross join json_to_recordset(${p.eventsJson}::json) as r(
      id text, name text, occurred_at timestamptz, subscription_id text, api_version text, identity_key text,
      erx_message_id text, status_rank integer, hold text, hold_detail text, raw json)
  ),
  -- a held event (unsupported_version) is stored and quarantined with its hold, never matched nor applied
  matched as materialized (
    select ev.*, case when ev.hold is null then m.prescription_id end as prescription_id,
      coalesce(ev.hold, m.quarantine_reason) as quarantine_reason,
      case when ev.hold is null then m.quarantine_detail else ev.hold_detail end as quarantine_detail
    from ev ${matchCandidatesLateral(n, sql`${p.feed}::text`)}
  ),
  inserted as (
    insert into ${n.events} (id, feed, name, occurred_at, subscription_id, api_version, raw, identity_key,
      erx_message_id, status_rank, prescription_id, received_at)
    select id, ${p.feed}::text, name, occurred_at, subscription_id, api_version, raw, identity_key,
      erx_message_id, status_rank, prescription_id, ${p.receivedAt}::timestamptz
    from matched
    on conflict (feed, id) do nothing
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
    update ${n.prescriptions} p
    set status = b.name, status_rank = b.status_rank, status_occurred_at = b.occurred_at, status_event_id = b.id,
      updated_at = ${p.receivedAt}::timestamptz,
      -- the terminal stamp of _stamp_terminal_at, set here: that row trigger's WHEN skips the page's rows (issue 37)
      terminal_at = case when b.status_rank >= 4 then coalesce(p.terminal_at, now()) else p.terminal_at end
    from best b
    where p.id = b.prescription_id and b.status_rank > p.status_rank
    returning p.id
  ),
  new_findings as (
    select matched.id, matched.quarantine_reason, matched.quarantine_detail, matched.raw, inserted.prescription_id
    from matched join inserted on inserted.id = matched.id
  ),
  to_quarantine as (
    -- one row per key: a well-formed copy of an id beats a malformed copy in the same page
    select distinct on (quarantine_key) quarantine_key, event_id, reason, detail, raw,
      count(*) over (partition by quarantine_key)::int as copies
    from (
      select id as quarantine_key, id as event_id, quarantine_reason as reason, quarantine_detail as detail, raw::jsonb, 0 as precedence
      from new_findings where quarantine_reason is not null
      union all
      -- a row with no usable id is keyed by its body's digest, keyed again with the database's secret (issue 33 §5)
      select case when m.event_id is null then ${n.qualified('_finding_key')}(m.key) else m.key end, m.event_id, 'malformed', m.detail, m.raw, 1
      from cas cross join jsonb_to_recordset(${p.malformedJson}::jsonb) as m(key text, event_id text, detail text, raw jsonb)
    ) findings
    order by quarantine_key, precedence
  ),
  quarantined as (
    insert into ${n.quarantine} as q (quarantine_key, event_id, feed, reason, detail, raw, first_seen_at, last_seen_at, seen_count)
    select quarantine_key, event_id, ${p.feed}::text, reason, detail, raw, ${p.receivedAt}::timestamptz, ${p.receivedAt}::timestamptz, copies
    from to_quarantine
    on conflict (feed, quarantine_key) do update set
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
      count(*) filter (where quarantine_reason = 'ambiguous')::int as ambiguous,
      count(*) filter (where quarantine_reason = 'unsupported_version')::int as unsupported_version
    from new_findings
  ),
  -- the row is locked by cas (FOR UPDATE, not a modification), so this is its only update
  checkpoint as (
    ${checkpoint}
  )
  select (select version from checkpoint) as version, counts.inserted, counts.matched, counts.unmatched, counts.ambiguous,
    counts.unsupported_version,
    (select count(*)::int from advanced) as status_changes,
    (select count(*)::int from quarantined) as quarantine_rows
  from counts`;
}

-- Re-evaluates held events against the registered prescriptions with the linked match (four
-- arguments), recording each finding's resolution. register_prescription calls it with the identity
-- keys and erx ids it registered, `rematch` with one batch of identity keys at a time (each batch its own
-- short transaction), null/null re-evaluates every held event of the feed in one transaction.
CREATE OR REPLACE FUNCTION "intake_sync"."rematch_held"(identity_keys text[] DEFAULT NULL, erx_message_ids text[] DEFAULT NULL, feed text DEFAULT NULL)
RETURNS TABLE (examined integer, matched integer, still_unmatched integer, still_ambiguous integer)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_custom_plan
-- every join an index probe per row, whatever the tables' statistics say (issue 26)
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
#variable_conflict use_column
BEGIN
  PERFORM "intake_sync"."_require_read_committed"('rematch_held');
  PERFORM "intake_sync"."_feed_lock"(rematch_held.feed, 'match', true);
  -- Driven from the key lists (issue 26): each distinct key is one lookup of the partial index of held
  -- events (OFFSET 0 keeps each lookup a subquery of its own, so no other index of events serves it
  -- and the feed filter stays outside), then one lookup of its finding by (feed, quarantine_key). A
  -- plan built on the ANY() lists instead walked every held event or every open finding per batch on
  -- tables without statistics (a 500-key batch took seconds under the match lock).
  WITH keys AS MATERIALIZED (
    SELECT DISTINCT k.key FROM pg_catalog.unnest(rematch_held.identity_keys) AS k(key) WHERE k.key IS NOT NULL
  ),
  erx_ids AS MATERIALIZED (
    SELECT DISTINCT x.erx FROM pg_catalog.unnest(rematch_held.erx_message_ids) AS x(erx) WHERE x.erx IS NOT NULL
  ),
  held_events AS (
    SELECT e.* FROM keys CROSS JOIN LATERAL (
      SELECT e.id, e.feed, e.identity_key, e.erx_message_id, e.subscription_id, e.name, e.occurred_at, e.status_rank
      FROM "intake_sync"."events" e
      WHERE e.identity_key = keys.key AND e.prescription_id IS NULL
      OFFSET 0
    ) e
    UNION
    SELECT e.* FROM erx_ids CROSS JOIN LATERAL (
      SELECT e.id, e.feed, e.identity_key, e.erx_message_id, e.subscription_id, e.name, e.occurred_at, e.status_rank
      FROM "intake_sync"."events" e
      WHERE e.erx_message_id = erx_ids.erx AND e.prescription_id IS NULL
      OFFSET 0
    ) e
  ),
  held AS (
    SELECT q.id AS quarantine_id, e.id, e.feed, e.identity_key, e.erx_message_id, e.subscription_id, e.name, e.occurred_at, e.status_rank
    FROM "intake_sync"."quarantine" q
    JOIN "intake_sync"."events" e ON e.feed = q.feed AND e.id = q.event_id
    WHERE q.resolved_at IS NULL AND q.reason IN ('unmatched', 'ambiguous') AND e.prescription_id IS NULL
      AND rematch_held.identity_keys IS NULL AND rematch_held.erx_message_ids IS NULL
      AND (rematch_held.feed IS NULL OR e.feed = rematch_held.feed)
    UNION ALL
    -- a held event's finding is keyed by its feed and id (quarantine_feed_key_key)
    SELECT f.quarantine_id, e.id, e.feed, e.identity_key, e.erx_message_id, e.subscription_id, e.name, e.occurred_at, e.status_rank
    FROM held_events e CROSS JOIN LATERAL (
      SELECT q.id AS quarantine_id FROM "intake_sync"."quarantine" q
      WHERE q.feed = e.feed AND q.quarantine_key = e.id AND q.resolved_at IS NULL AND q.reason IN ('unmatched', 'ambiguous')
      OFFSET 0
    ) f
    WHERE rematch_held.feed IS NULL OR e.feed = rematch_held.feed
  ),
  evaluated AS (
    SELECT held.*, m.prescription_id, m.candidates, m.quarantine_reason, m.quarantine_detail
    FROM held CROSS JOIN LATERAL "intake_sync"."_match_prescription"(held.identity_key, held.erx_message_id, held.feed, held.subscription_id) m
  ),
  linked AS (
    UPDATE "intake_sync"."events" e SET prescription_id = v.prescription_id
    FROM evaluated v WHERE e.feed = v.feed AND e.id = v.id AND v.candidates = 1
  ),
  -- per prescription the highest rank wins; ties go to the later event, then the larger id
  best AS (
    SELECT DISTINCT ON (prescription_id) prescription_id, id, name, occurred_at, status_rank
    FROM evaluated
    WHERE candidates = 1 AND status_rank IS NOT NULL
    ORDER BY prescription_id, status_rank DESC, occurred_at DESC, id DESC
  ),
  advanced AS (
    UPDATE "intake_sync"."prescriptions" p
    SET status = b.name, status_rank = b.status_rank, status_occurred_at = b.occurred_at, status_event_id = b.id,
      updated_at = pg_catalog.now()
    FROM best b
    WHERE p.id = b.prescription_id AND b.status_rank > p.status_rank
  ),
  resolved AS (
    UPDATE "intake_sync"."quarantine" q SET resolved_at = pg_catalog.now(), resolution = 'matched', resolution_note = NULL
    FROM evaluated v WHERE q.id = v.quarantine_id AND v.candidates = 1
  ),
  -- the same reason and wording as a page apply gives; a finding whose verdict did not change is not
  -- rewritten (most of a large quarantine stays unmatched: rewriting it cost a rematch most of its time)
  reclassified AS (
    UPDATE "intake_sync"."quarantine" q SET reason = v.quarantine_reason, detail = v.quarantine_detail
    FROM evaluated v WHERE q.id = v.quarantine_id AND v.candidates <> 1
      AND (q.reason IS DISTINCT FROM v.quarantine_reason OR q.detail IS DISTINCT FROM v.quarantine_detail)
  )
  SELECT pg_catalog.count(*)::integer,
    (pg_catalog.count(*) FILTER (WHERE candidates = 1))::integer,
    (pg_catalog.count(*) FILTER (WHERE candidates = 0))::integer,
    (pg_catalog.count(*) FILTER (WHERE candidates > 1))::integer
  INTO examined, matched, still_unmatched, still_ambiguous
  FROM evaluated;
  RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."rematch_held"(text[], text[], text) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."rematch_held"(text[], text[], text) IS 're-evaluates held (unmatched/ambiguous) events against the local prescriptions of their own feed; null arguments: all of them (docs/sql-api/register.md)';

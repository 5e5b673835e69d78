-- _analyze_table(table_name): ANALYZE one table of the schema, for the daemon's statistics task
-- (src/sync/statistics/). Only the owner (or, from PostgreSQL 17, a role with MAINTAIN) may ANALYZE a
-- table; the runtime role gets this SECURITY DEFINER function instead, which analyzes nothing but a
-- plain table of this schema named exactly (no other schema, no view, no expression).
CREATE OR REPLACE FUNCTION "intake_sync"."_analyze_table"(table_name text)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF table_name IS NULL THEN
    RAISE EXCEPTION 'table_name: required' USING ERRCODE = '23502';
  END IF;
  IF pg_catalog.length(table_name) > 63 OR NOT EXISTS (
    SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace s ON s.oid = c.relnamespace
    WHERE s.nspname = 'intake_sync' AND c.relname = table_name AND c.relkind IN ('r', 'p')
  ) THEN
    RAISE EXCEPTION 'table_name: not a table of the schema' USING ERRCODE = '22023';
  END IF;
  EXECUTE pg_catalog.format('ANALYZE %I.%I', 'intake_sync', table_name);
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_analyze_table"(text) FROM PUBLIC;
--> statement-breakpoint
-- rematch_held(): the held-event lookup driven from the key lists with the planner settings pinned, so its
-- plan holds on tables without statistics and with millions of rows (issue 26; sql/current-schema.sql).
CREATE OR REPLACE FUNCTION "intake_sync"."rematch_held"(identity_keys text[] DEFAULT NULL::text[], erx_message_ids text[] DEFAULT NULL::text[], feed text DEFAULT NULL::text) RETURNS TABLE(examined integer, matched integer, still_unmatched integer, still_ambiguous integer)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_custom_plan'
    SET enable_bitmapscan TO 'off'
    SET enable_hashjoin TO 'off'
    SET enable_mergejoin TO 'off'
    AS $$
#variable_conflict use_column
BEGIN
  PERFORM "intake_sync"."_require_read_committed"('rematch_held');
  PERFORM pg_catalog.pg_advisory_xact_lock(7306, pg_catalog.hashtext('intake_sync'));
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
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."rematch_held"(text[], text[], text) FROM PUBLIC;

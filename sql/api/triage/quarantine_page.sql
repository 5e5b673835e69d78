-- One page of the open findings the caller may see (docs/sql-api/triage.md), oldest first, after a
-- keyset position: what quarantine_open shows, filtered and ordered INSIDE the function. A query on the
-- view cannot do that: a security_barrier view with a join is never merged into the query around it,
-- so `ORDER BY held_since LIMIT 51` on it reads, joins and sorts every visible open finding (370 ms at
-- 100k, bench:console). Here the statement is built from the filters given (each a bound parameter)
-- and planned for their values, so the page walks quarantine_open_held_idx in order and stops after
-- max_rows. Its arguments are named in_* where a result column has the same name. SECURITY DEFINER (the app role reads no table), filtered by the caller's feeds
-- (_visible_feeds) before anything else; identifiers, codes and times only, never patient data.
CREATE OR REPLACE FUNCTION "intake_sync"."quarantine_page"(
  in_feed text DEFAULT NULL, in_reason text DEFAULT NULL, in_event_name text DEFAULT NULL,
  held_before timestamptz DEFAULT NULL, search text DEFAULT NULL,
  after_held_since timestamptz DEFAULT NULL, after_feed text DEFAULT NULL, after_key text DEFAULT NULL,
  max_rows integer DEFAULT 50)
RETURNS TABLE (feed text, event_id text, reason text, event_name text, occurred_at timestamptz, held_since timestamptz,
  detail text, seen_count integer, quarantine_key text, subscription_id text)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
-- the page is the index's order: with no statistics (a fresh or restored database) the planner
-- guessed a few rows and sorted all the visible findings instead of walking the index and stopping
SET enable_sort = off AS $$
DECLARE
  visible text[] := "intake_sync"."_visible_feeds"();
  statement text := 'SELECT q.feed, q.event_id, q.reason, e.name, e.occurred_at, q.first_seen_at, q.detail, q.seen_count, q.quarantine_key, e.subscription_id
    FROM "intake_sync"."quarantine" q LEFT JOIN "intake_sync"."events" e ON e.feed = q.feed AND e.id = q.event_id
    WHERE q.resolved_at IS NULL';
BEGIN
  IF pg_catalog.length(quarantine_page.in_feed) > 64 THEN RAISE EXCEPTION 'in_feed: at most 64 characters' USING ERRCODE = '22001', COLUMN = 'in_feed'; END IF;
  IF quarantine_page.in_reason IS NOT NULL AND quarantine_page.in_reason NOT IN ('unmatched', 'ambiguous', 'malformed', 'unsupported_version') THEN
    RAISE EXCEPTION 'in_reason: one of unmatched, ambiguous, malformed, unsupported_version' USING ERRCODE = '22023', COLUMN = 'in_reason';
  END IF;
  IF pg_catalog.length(quarantine_page.in_event_name) > 64 THEN RAISE EXCEPTION 'in_event_name: at most 64 characters' USING ERRCODE = '22001', COLUMN = 'in_event_name'; END IF;
  IF pg_catalog.length(quarantine_page.search) > 512 THEN RAISE EXCEPTION 'search: at most 512 characters' USING ERRCODE = '22001', COLUMN = 'search'; END IF;
  IF pg_catalog.length(quarantine_page.after_feed) > 64 OR pg_catalog.length(quarantine_page.after_key) > 512 THEN
    RAISE EXCEPTION 'after_feed, after_key: at most 64 and 512 characters' USING ERRCODE = '22001', COLUMN = 'after_key';
  END IF;
  IF (quarantine_page.after_held_since IS NULL) <> (quarantine_page.after_feed IS NULL) OR (quarantine_page.after_feed IS NULL) <> (quarantine_page.after_key IS NULL) THEN
    RAISE EXCEPTION 'after_held_since, after_feed, after_key: give all three (a position) or none' USING ERRCODE = '22023', COLUMN = 'after_key';
  END IF;
  IF quarantine_page.max_rows IS NULL OR quarantine_page.max_rows < 1 OR quarantine_page.max_rows > 500 THEN
    RAISE EXCEPTION 'max_rows: from 1 to 500' USING ERRCODE = '22023', COLUMN = 'max_rows';
  END IF;
  -- the caller's feeds first (null: every feed). A filter, not an index condition: before PostgreSQL 17
  -- an `= ANY` on the index's second column makes the walk unordered, and the planner then sorted every
  -- visible finding instead of stopping after max_rows (220 ms at 50k, no statistics)
  IF visible IS NOT NULL THEN statement := statement || ' AND (q.feed = ANY ($1)) IS TRUE'; END IF;
  IF quarantine_page.in_feed IS NOT NULL THEN statement := statement || ' AND q.feed = $2'; END IF;
  IF quarantine_page.in_reason IS NOT NULL THEN statement := statement || ' AND q.reason = $3'; END IF;
  IF quarantine_page.in_event_name IS NOT NULL THEN statement := statement || ' AND e.name = $4'; END IF;
  IF quarantine_page.held_before IS NOT NULL THEN statement := statement || ' AND q.first_seen_at <= $5'; END IF;
  IF quarantine_page.search IS NOT NULL THEN
    -- an event id, a subscription id, or the external_id of a visible prescription whose subscription it is
    statement := statement || ' AND (q.event_id = $6 OR e.subscription_id = $6 OR e.subscription_id IN (
      SELECT p.subscription_id FROM "intake_sync"."prescriptions" p
      WHERE p.external_id = $6 AND p.subscription_id IS NOT NULL AND ($1 IS NULL OR p.feed = ANY ($1))))';
  END IF;
  IF quarantine_page.after_key IS NOT NULL THEN statement := statement || ' AND (q.first_seen_at, q.feed, q.quarantine_key) > ($7, $8, $9)'; END IF;
  statement := statement || ' ORDER BY q.first_seen_at, q.feed, q.quarantine_key LIMIT $10';
  RETURN QUERY EXECUTE statement USING visible, quarantine_page.in_feed, quarantine_page.in_reason, quarantine_page.in_event_name,
    quarantine_page.held_before, quarantine_page.search, quarantine_page.after_held_since, quarantine_page.after_feed,
    quarantine_page.after_key, quarantine_page.max_rows;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."quarantine_page"(text, text, text, timestamptz, text, timestamptz, text, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."quarantine_page"(text, text, text, timestamptz, text, timestamptz, text, text, integer) IS 'one page of the caller''s open findings, oldest first after a keyset position, filtered inside: quarantine_open''s columns, no PHI (docs/sql-api/triage.md)';

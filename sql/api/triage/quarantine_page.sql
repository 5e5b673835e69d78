-- One page of the open findings the caller may see (docs/sql-api/triage.md), oldest first, after (or,
-- backward, before) a keyset position: what quarantine_open shows, filtered and ordered INSIDE the
-- function. A query on the view cannot do that: a security_barrier view with a join is never merged into
-- the query around it, so `ORDER BY held_since LIMIT 51` on it reads, joins and sorts every visible open
-- finding (370 ms at 100k, bench:console). Here the statement is built from the filters given
-- (_quarantine_filter, the one filter quarantine_count and dismiss_matching use too, each a bound
-- parameter) and planned for their values, so the page walks quarantine_open_held_idx in order and stops
-- after max_rows. A Search instead reads its few findings by index and sorts them.
-- backward: the rows before the position, nearest first (the previous page, which the caller reverses).
-- Its arguments are named in_* where a result column has the same name. SECURITY DEFINER (the app role
-- reads no table), filtered by the caller's feeds (_visible_feeds) before anything else; identifiers,
-- codes and times only, never patient data.
-- The 9-argument version without backward is dropped by drizzle/0028_console_lookups.sql.
CREATE OR REPLACE FUNCTION "intake_sync"."quarantine_page"(
  in_feed text DEFAULT NULL, in_reason text DEFAULT NULL, in_event_name text DEFAULT NULL,
  held_before timestamptz DEFAULT NULL, search text DEFAULT NULL,
  after_held_since timestamptz DEFAULT NULL, after_feed text DEFAULT NULL, after_key text DEFAULT NULL,
  max_rows integer DEFAULT 50, backward boolean DEFAULT false)
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
    WHERE true';
BEGIN
  statement := statement || "intake_sync"."_quarantine_filter"(visible, quarantine_page.in_feed, quarantine_page.in_reason,
    quarantine_page.in_event_name, quarantine_page.held_before, quarantine_page.search);
  IF pg_catalog.length(quarantine_page.after_feed) > 64 OR pg_catalog.length(quarantine_page.after_key) > 512 THEN
    RAISE EXCEPTION 'after_feed, after_key: at most 64 and 512 characters' USING ERRCODE = '22001', COLUMN = 'after_key';
  END IF;
  IF (quarantine_page.after_held_since IS NULL) <> (quarantine_page.after_feed IS NULL) OR (quarantine_page.after_feed IS NULL) <> (quarantine_page.after_key IS NULL) THEN
    RAISE EXCEPTION 'after_held_since, after_feed, after_key: give all three (a position) or none' USING ERRCODE = '22023', COLUMN = 'after_key';
  END IF;
  IF quarantine_page.max_rows IS NULL OR quarantine_page.max_rows < 1 OR quarantine_page.max_rows > 500 THEN
    RAISE EXCEPTION 'max_rows: from 1 to 500' USING ERRCODE = '22023', COLUMN = 'max_rows';
  END IF;
  IF quarantine_page.backward IS NULL THEN
    RAISE EXCEPTION 'backward: required (true or false)' USING ERRCODE = '23502', COLUMN = 'backward';
  END IF;
  IF quarantine_page.search IS NOT NULL THEN
    -- a handful of findings read by index: sorting them is cheaper than walking every open finding in order
    PERFORM pg_catalog.set_config('enable_sort', 'on', true);
  END IF;
  IF quarantine_page.after_key IS NOT NULL THEN
    statement := statement || CASE WHEN quarantine_page.backward THEN ' AND (q.first_seen_at, q.feed, q.quarantine_key) < ($7, $8, $9)'
      ELSE ' AND (q.first_seen_at, q.feed, q.quarantine_key) > ($7, $8, $9)' END;
  END IF;
  statement := statement || CASE WHEN quarantine_page.backward THEN ' ORDER BY q.first_seen_at DESC, q.feed DESC, q.quarantine_key DESC LIMIT $10'
    ELSE ' ORDER BY q.first_seen_at, q.feed, q.quarantine_key LIMIT $10' END;
  RETURN QUERY EXECUTE statement USING visible, quarantine_page.in_feed, quarantine_page.in_reason,
    quarantine_page.in_event_name, quarantine_page.held_before, quarantine_page.search, quarantine_page.after_held_since,
    quarantine_page.after_feed, quarantine_page.after_key, quarantine_page.max_rows;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."quarantine_page"(text, text, text, timestamptz, text, timestamptz, text, text, integer, boolean) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."quarantine_page"(text, text, text, timestamptz, text, timestamptz, text, text, integer, boolean) IS 'one page of the caller''s open findings, oldest first after (or backward before) a keyset position, filtered inside by _quarantine_filter: quarantine_open''s columns, no PHI (docs/sql-api/triage.md)';

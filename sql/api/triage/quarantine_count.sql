-- How many open findings the caller may see match a filter, and the instant of that count: `as_of`, the
-- highest finding id the count could see. The console's quarantine total and Dismiss all matching's dry
-- run; dismiss_matching(..., as_of, ...) then closes the findings of the same filter up to that id, so a
-- finding that arrives after the count (a higher id) stays open (issue 34 §5). The filter is
-- _quarantine_filter, the one the list (quarantine_page) and the bulk action use. SECURITY DEFINER,
-- filtered by the caller's feeds (_visible_feeds); counts only, never patient data. at_most: stop
-- counting there (the list's total says "more than"; the count walks matching findings, so a filter on
-- the event's name alone would read every open finding of the caller's feeds on every page).
CREATE OR REPLACE FUNCTION "intake_sync"."quarantine_count"(
  in_feed text DEFAULT NULL, in_reason text DEFAULT NULL, in_event_name text DEFAULT NULL,
  held_before timestamptz DEFAULT NULL, search text DEFAULT NULL, at_most bigint DEFAULT NULL)
RETURNS TABLE (matching bigint, as_of bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  visible text[] := "intake_sync"."_visible_feeds"();
BEGIN
  IF quarantine_count.at_most IS NOT NULL AND quarantine_count.at_most < 1 THEN
    RAISE EXCEPTION 'at_most: 1 or more, or null (count them all)' USING ERRCODE = '22023', COLUMN = 'at_most';
  END IF;
  -- one statement, one snapshot: the count and the highest id it could see agree
  RETURN QUERY EXECUTE 'SELECT pg_catalog.count(*), (SELECT COALESCE(pg_catalog.max(m.id), 0) FROM "intake_sync"."quarantine" m)
    FROM (SELECT 1 FROM "intake_sync"."quarantine" q LEFT JOIN "intake_sync"."events" e ON e.feed = q.feed AND e.id = q.event_id
    WHERE true' || "intake_sync"."_quarantine_filter"(visible, quarantine_count.in_feed, quarantine_count.in_reason,
      quarantine_count.in_event_name, quarantine_count.held_before, quarantine_count.search) || ' LIMIT $7) counted'
    USING visible, quarantine_count.in_feed, quarantine_count.in_reason, quarantine_count.in_event_name,
      quarantine_count.held_before, quarantine_count.search, quarantine_count.at_most;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."quarantine_count"(text, text, text, timestamptz, text, bigint) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."quarantine_count"(text, text, text, timestamptz, text, bigint) IS 'how many of the caller''s open findings match the quarantine filter, and as_of (the highest finding id the count saw) for dismiss_matching (docs/sql-api/triage.md)';

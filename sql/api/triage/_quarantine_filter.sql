-- The quarantine filter, written once (issue 32 §2, issue 34 §5): the WHERE conditions that
-- quarantine_page (the list), quarantine_count (its total and Dismiss all matching's dry run) and
-- dismiss_matching (the bulk action) add to the same FROM:
--   "intake_sync"."quarantine" q LEFT JOIN "intake_sync"."events" e ON e.feed = q.feed AND e.id = q.event_id
-- Each caller EXECUTEs its statement USING the same first six values: $1 the caller's feeds
-- (_visible_feeds(), null: every feed), $2 feed, $3 reason, $4 event name, $5 held_before, $6 search;
-- a condition is added only for an argument given, so each statement is planned for its own filters.
-- Checks every argument (a bad one is named, nothing is read). Owner only: its callers are SECURITY
-- DEFINER and pass the caller's own feeds.
-- Search (an event id, a subscription id, or a visible prescription's external_id) becomes the set of
-- finding ids it names, found here by index lookups (quarantine_open_event_idx,
-- events_subscription_feed_idx from 0028, prescriptions_external_id_idx) and written into the condition:
-- an OR of the three across the two tables had no index condition and walked every open finding of the
-- caller (about 180 ms at 100k, bench:console). $6 stays bound for the callers' argument order.
CREATE OR REPLACE FUNCTION "intake_sync"."_quarantine_filter"(
  visible text[], in_feed text, in_reason text, in_event_name text, held_before timestamptz, search text)
RETURNS text
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  conditions text := ' AND q.resolved_at IS NULL';
  subscriptions text[];
  found bigint[];
  held record;
BEGIN
  -- the caller's feeds first (null: every feed). A filter, not an index condition: before PostgreSQL 17
  -- an `= ANY` on the index's second column makes quarantine_page's walk unordered, and the planner then
  -- sorted every visible finding instead of stopping after max_rows (220 ms at 50k, no statistics)
  IF _quarantine_filter.visible IS NOT NULL THEN conditions := conditions || ' AND (q.feed = ANY ($1)) IS TRUE'; END IF;
  IF pg_catalog.length(_quarantine_filter.in_feed) > 64 THEN
    RAISE EXCEPTION 'in_feed: at most 64 characters' USING ERRCODE = '22001', COLUMN = 'in_feed';
  END IF;
  IF _quarantine_filter.in_reason IS NOT NULL AND NOT _quarantine_filter.in_reason = ANY ("intake_sync"."quarantine_reasons"()) THEN
    RAISE EXCEPTION 'in_reason: one of %', pg_catalog.array_to_string("intake_sync"."quarantine_reasons"(), ', ')
      USING ERRCODE = '22023', COLUMN = 'in_reason';
  END IF;
  IF pg_catalog.length(_quarantine_filter.in_event_name) > 64 THEN
    RAISE EXCEPTION 'in_event_name: at most 64 characters' USING ERRCODE = '22001', COLUMN = 'in_event_name';
  END IF;
  IF pg_catalog.length(_quarantine_filter.search) > 512 THEN
    RAISE EXCEPTION 'search: at most 512 characters' USING ERRCODE = '22001', COLUMN = 'search';
  END IF;
  IF _quarantine_filter.in_feed IS NOT NULL THEN conditions := conditions || ' AND q.feed = $2'; END IF;
  IF _quarantine_filter.in_reason IS NOT NULL THEN conditions := conditions || ' AND q.reason = $3'; END IF;
  IF _quarantine_filter.in_event_name IS NOT NULL THEN conditions := conditions || ' AND e.name = $4'; END IF;
  IF _quarantine_filter.held_before IS NOT NULL THEN conditions := conditions || ' AND q.first_seen_at <= $5'; END IF;
  IF _quarantine_filter.search IS NOT NULL THEN
    -- the subscriptions searched: the search itself, and those of the visible prescriptions it names
    subscriptions := ARRAY[_quarantine_filter.search] || ARRAY(
      SELECT p.subscription_id FROM "intake_sync"."prescriptions" p
      WHERE p.external_id = _quarantine_filter.search AND p.subscription_id IS NOT NULL
        AND (_quarantine_filter.visible IS NULL OR p.feed = ANY (_quarantine_filter.visible)));
    -- the open findings of that event id, then those of each event of those subscriptions, each by its
    -- index, one lookup at a time: a join left to the planner (no statistics) walked every open
    -- finding and probed its event instead (400-800 ms at 100k, 40 ms at 10k); found here, not in the
    -- statement, so the statement reads its rows by id
    found := ARRAY(SELECT o.id FROM "intake_sync"."quarantine" o WHERE o.event_id = _quarantine_filter.search AND o.resolved_at IS NULL);
    FOR held IN SELECT s.feed, s.id FROM "intake_sync"."events" s WHERE s.subscription_id = ANY (subscriptions) LOOP
      found := found || ARRAY(SELECT o.id FROM "intake_sync"."quarantine" o
        WHERE o.event_id = held.id AND o.feed = held.feed AND o.resolved_at IS NULL);
    END LOOP;
    -- ids only (bigints, written by format): the statement reads those rows by the primary key
    conditions := conditions || pg_catalog.format(' AND q.id = ANY (%L::bigint[])', found);
  END IF;
  RETURN conditions;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_quarantine_filter"(text[], text, text, text, timestamptz, text) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."_quarantine_filter"(text[], text, text, text, timestamptz, text) IS 'the quarantine filter''s WHERE conditions, shared by quarantine_page, quarantine_count and dismiss_matching (docs/sql-api/triage.md)';

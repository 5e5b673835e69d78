-- Dismiss all matching, set-based (issue 34 §5, issue 32 §2): closes as 'dismissed' with a reason code
-- the caller's open findings that match the quarantine filter (_quarantine_filter, the one the list and
-- quarantine_count use) AND were counted: id <= as_of, the as_of quarantine_count returned with the
-- count the person confirmed. A finding that arrived after the count stays open; one closed meanwhile
-- (a registration matched it, someone dismissed it) is not touched. Each finding closes alone (as
-- dismiss_quarantined(..., only_this_event => true)): the filter is the scope, not the subscription.
-- One audit row per finding (quarantine.dismiss, with dismiss_all: true). At most max_rows findings per
-- call, oldest first (the list's order), in one UPDATE: the caller repeats until fewer than max_rows are closed, so the
-- feeds' match locks are held for one batch at a time. Returns how many it closed and, on the call that
-- closes fewer than max_rows (the last), left_open: how many open findings match the filter but arrived
-- after the count (null on the other calls). Takes the match lock of the filter's feed, or of every feed
-- the caller may see (in feed order), exclusively, as dismiss_quarantined does; READ COMMITTED only.
-- Refuses, writing nothing: a bad filter argument (as quarantine_page), a missing or malformed reason
-- code, as_of or max_rows (23502/22023).
CREATE OR REPLACE FUNCTION "intake_sync"."dismiss_matching"(
  in_feed text, in_reason text, in_event_name text, held_before timestamptz, search text,
  as_of bigint, reason text, max_rows integer DEFAULT 100)
RETURNS TABLE (dismissed integer, left_open bigint)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
-- a batch is the list's order, oldest first (quarantine_open_held_idx), read until it is full: with no
-- statistics the planner otherwise read and sorted every open finding for each batch (700 ms at 100k)
SET enable_sort = off AS $$
#variable_conflict use_column
DECLARE
  visible text[] := "intake_sync"."_visible_feeds"();
  conditions text;
  locked text;
  closed record;
  n integer := 0;
  waiting bigint;
BEGIN
  IF dismiss_matching.as_of IS NULL OR dismiss_matching.as_of < 0 THEN
    RAISE EXCEPTION 'as_of: required, the as_of quarantine_count returned with the count' USING ERRCODE = '22023', COLUMN = 'as_of';
  END IF;
  IF dismiss_matching.reason IS NULL THEN
    RAISE EXCEPTION 'reason: required' USING ERRCODE = '23502', COLUMN = 'reason';
  END IF;
  IF dismiss_matching.reason !~ '^[a-z][a-z0-9_.-]{0,63}$' THEN
    RAISE EXCEPTION 'reason: must be a code of 1-64 a-z 0-9 _ . - starting with a letter (not_ours, operator_test, ...)'
      USING ERRCODE = '22023', COLUMN = 'reason';
  END IF;
  IF dismiss_matching.max_rows IS NULL OR dismiss_matching.max_rows < 1 OR dismiss_matching.max_rows > 1000 THEN
    RAISE EXCEPTION 'max_rows: from 1 to 1000' USING ERRCODE = '22023', COLUMN = 'max_rows';
  END IF;
  PERFORM "intake_sync"."_require_read_committed"('dismiss_matching');
  IF dismiss_matching.in_feed IS NOT NULL THEN
    PERFORM "intake_sync"."_require_feed"(dismiss_matching.in_feed);
    PERFORM "intake_sync"."_feed_lock"(dismiss_matching.in_feed, 'match', true);
  ELSIF visible IS NULL THEN
    PERFORM "intake_sync"."_feed_lock"(NULL, 'match', true);
  ELSE
    FOR locked IN SELECT f FROM pg_catalog.unnest(visible) f ORDER BY f LOOP
      PERFORM "intake_sync"."_feed_lock"(locked, 'match', true);
    END LOOP;
  END IF;
  -- read after the locks: a rematch that closed findings meanwhile has committed (a bad filter argument
  -- is refused here, before anything is written)
  conditions := "intake_sync"."_quarantine_filter"(visible, dismiss_matching.in_feed, dismiss_matching.in_reason,
    dismiss_matching.in_event_name, dismiss_matching.held_before, dismiss_matching.search);
  IF dismiss_matching.search IS NOT NULL THEN
    -- a Search's few findings, read by id (_quarantine_filter): sorting them costs nothing
    PERFORM pg_catalog.set_config('enable_sort', 'on', true);
  END IF;
  FOR closed IN EXECUTE 'WITH picked AS (
      SELECT q.id, e.subscription_id FROM "intake_sync"."quarantine" q
      LEFT JOIN "intake_sync"."events" e ON e.feed = q.feed AND e.id = q.event_id
      WHERE q.id <= $7' || conditions || '
      ORDER BY q.first_seen_at, q.feed, q.quarantine_key LIMIT $9 FOR UPDATE OF q)
    UPDATE "intake_sync"."quarantine" u
    SET resolved_at = pg_catalog.now(), resolution = ''dismissed'', resolution_note = $8
    FROM picked WHERE u.id = picked.id
    RETURNING u.feed, u.quarantine_key, u.reason, picked.subscription_id'
    USING visible, dismiss_matching.in_feed, dismiss_matching.in_reason, dismiss_matching.in_event_name,
      dismiss_matching.held_before, dismiss_matching.search, dismiss_matching.as_of, dismiss_matching.reason, dismiss_matching.max_rows
  LOOP
    n := n + 1;
    PERFORM "intake_sync"."_audit"('quarantine.dismiss', closed.feed, closed.quarantine_key,
      pg_catalog.jsonb_build_object('reason', dismiss_matching.reason, 'finding_reason', closed.reason,
        'subscription_id', closed.subscription_id, 'dismiss_all', true));
  END LOOP;
  IF n < dismiss_matching.max_rows THEN
    EXECUTE 'SELECT pg_catalog.count(*) FROM "intake_sync"."quarantine" q
      LEFT JOIN "intake_sync"."events" e ON e.feed = q.feed AND e.id = q.event_id WHERE q.id > $7' || conditions
      INTO waiting
      USING visible, dismiss_matching.in_feed, dismiss_matching.in_reason, dismiss_matching.in_event_name,
        dismiss_matching.held_before, dismiss_matching.search, dismiss_matching.as_of;
  END IF;
  dismissed := n;
  left_open := waiting;
  RETURN NEXT;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."dismiss_matching"(text, text, text, timestamptz, text, bigint, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."dismiss_matching"(text, text, text, timestamptz, text, bigint, text, integer) IS 'Dismiss all matching: closes the caller''s open findings that match the quarantine filter and were counted (id <= as_of), each alone, audited per finding; returns how many and how many arrived after the count (docs/sql-api/triage.md)';

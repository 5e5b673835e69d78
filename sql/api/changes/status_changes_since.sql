-- The change feed after a cursor, in commit order. A cursor older than the newest change retention
-- deleted (change_horizons) raises SQLSTATE IS410 'cursor expired: ...' instead of skipping what was
-- deleted; rows (and horizons) are those of the caller's visible feeds only.
-- The caller's feeds are computed once (not a SECURITY DEFINER check per row); a role
-- restricted to some feeds walks change_commit_feeds by (feed, commit_seq) from its cursor, so a
-- caught-up poll of a quiet feed costs an index probe per feed whatever another feed committed.
-- Sequential and bitmap scans are off in the function: the plan must hold on tables without
-- statistics (autovacuum off, a fresh install), where the planner may otherwise read a whole table
-- or sort every commit of the feed instead of walking the index in order up to the limit.
CREATE OR REPLACE FUNCTION "intake_sync"."status_changes_since"(cursor text, max_rows integer DEFAULT 1000) RETURNS SETOF "intake_sync"."status_change"
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_custom_plan'
    SET enable_seqscan TO 'off'
    SET enable_bitmapscan TO 'off'
    AS $_$
DECLARE
  given_cursor ALIAS FOR $1;
  given_max ALIAS FOR $2;
  parts text[];
  after_seq bigint := 0;
  after_id bigint := 0;
  expired_feed text;
  -- NULL: the caller sees every feed (owner, runtime, an app role granted no feed list)
  visible text[] := "intake_sync"."_visible_feeds"();
BEGIN
  IF given_max IS NULL OR given_max < 1 OR given_max > 10000 THEN
    RAISE EXCEPTION 'status_changes_since: max_rows must be between 1 and 10000' USING ERRCODE = '22023';
  END IF;
  IF given_cursor IS NOT NULL THEN
    parts := regexp_match(given_cursor, '^v1:([0-9]{1,18}):([0-9]{1,18})$');
    IF parts IS NULL THEN
      RAISE EXCEPTION 'status_changes_since: cursor is malformed (pass null or a cursor this function returned)' USING ERRCODE = '22023';
    END IF;
    after_seq := parts[1]::bigint;
    after_id := parts[2]::bigint;
    SELECT h.feed INTO expired_feed FROM "intake_sync"."change_horizons" h
    WHERE (after_seq, after_id) < (h.purged_seq, h.purged_id) AND (visible IS NULL OR h.feed = ANY (visible))
    ORDER BY h.feed LIMIT 1;
    IF expired_feed IS NOT NULL THEN
      RAISE EXCEPTION 'cursor expired: changes after it were deleted by retention (RETAIN_STATUS_CHANGES of feed %)', expired_feed
        USING ERRCODE = 'IS410',
        HINT = 'reconcile from prescription_status, then follow again from null (the oldest change kept) or a newer cursor';
    END IF;
  END IF;
  IF visible IS NULL THEN
    RETURN QUERY
      SELECT 'v1:' || c.commit_seq || ':' || s.id, s.external_id, s.previous_status, s.new_status, s.event_id,
        s.occurred_at, s.changed_at, s.feed
      FROM "intake_sync"."change_commits" c
      JOIN "intake_sync"."status_changes" s ON s.xid = c.xid
      WHERE c.commit_seq >= after_seq AND (c.commit_seq > after_seq OR s.id > after_id)
      ORDER BY c.commit_seq, s.id
      LIMIT given_max;
  ELSE
    RETURN QUERY
      SELECT 'v1:' || c.commit_seq || ':' || s.id, s.external_id, s.previous_status, s.new_status, s.event_id,
        s.occurred_at, s.changed_at, s.feed
      FROM pg_catalog.unnest(visible) AS f(feed)
      -- each commit holds at least one change of its feed, but the cursor's own commit may hold
      -- none past the cursor: given_max + 1 commits per feed are enough
      CROSS JOIN LATERAL (
        SELECT cf.commit_seq, cf.xid FROM "intake_sync"."change_commit_feeds" cf
        WHERE cf.feed = f.feed AND cf.commit_seq >= after_seq
        ORDER BY cf.commit_seq LIMIT given_max + 1
      ) c
      JOIN "intake_sync"."status_changes" s ON s.xid = c.xid AND s.feed = f.feed
      WHERE c.commit_seq > after_seq OR s.id > after_id
      ORDER BY c.commit_seq, s.id
      LIMIT given_max;
  END IF;
END $_$;

REVOKE ALL ON FUNCTION "intake_sync"."status_changes_since"(text, integer) FROM PUBLIC;

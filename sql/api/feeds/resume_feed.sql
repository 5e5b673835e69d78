-- `intake-sync feeds resume`: ends a pause (pause_feed.sql); every replica's worker for the feed
-- polls again within a lease check. Audited as feed.resume (with the reason it was paused for) when
-- the feed was paused. Granted to the runtime role, never to app roles. Returns true when the feed
-- was paused. Refuses, writing nothing: a missing or malformed feed (23502/22023), an unknown one (42704).
CREATE OR REPLACE FUNCTION "intake_sync"."resume_feed"(feed text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  was text;
BEGIN
  PERFORM "intake_sync"."_require_feed"(resume_feed.feed);
  DELETE FROM "intake_sync"."feed_pauses" p WHERE p.feed = resume_feed.feed RETURNING p.reason INTO was;
  IF was IS NULL THEN
    RETURN false;
  END IF;
  PERFORM "intake_sync"."_audit"('feed.resume', resume_feed.feed, NULL, pg_catalog.jsonb_build_object('paused_for', was));
  RETURN true;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."resume_feed"(text) FROM PUBLIC;

-- `intake-sync feeds pause`: pauses a feed for every replica (feed_pauses, 0029). Each replica's
-- worker reads the pauses once per lease check: the leader stops polling and sending, keeps the
-- lease, and its lag alerts are silenced (intake_sync_feed_paused). reason: a code (clinic_leaving,
-- operator_review), stored, audited and shown in metrics, never prose. Pausing a paused feed changes
-- its reason. Audited as feed.pause in the caller's transaction. Granted to the runtime role, never
-- to app roles (docs/security.md). Returns true when the feed was not paused before.
-- Refuses, writing nothing: a missing or malformed argument (23502/22023), an unknown feed (42704).
CREATE OR REPLACE FUNCTION "intake_sync"."pause_feed"(feed text, reason text)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  was text;
  by_whom text := COALESCE(NULLIF(pg_catalog.current_setting('intake_sync.actor', true), ''), session_user::text);
BEGIN
  IF pause_feed.reason IS NULL THEN
    RAISE EXCEPTION 'reason: required' USING ERRCODE = '23502', COLUMN = 'reason';
  END IF;
  IF pause_feed.reason !~ '^[a-z][a-z0-9_.-]{0,63}$' THEN
    RAISE EXCEPTION 'reason: must be a code of 1-64 a-z 0-9 _ . - starting with a letter (clinic_leaving, operator_review, ...)'
      USING ERRCODE = '22023', COLUMN = 'reason';
  END IF;
  PERFORM "intake_sync"."_require_feed"(pause_feed.feed);
  SELECT p.reason INTO was FROM "intake_sync"."feed_pauses" p WHERE p.feed = pause_feed.feed FOR UPDATE;
  INSERT INTO "intake_sync"."feed_pauses" AS p (feed, reason, paused_by)
  VALUES (pause_feed.feed, pause_feed.reason, pg_catalog.left(by_whom, 128))
  ON CONFLICT (feed) DO UPDATE SET reason = excluded.reason, paused_by = excluded.paused_by;
  PERFORM "intake_sync"."_audit"('feed.pause', pause_feed.feed, NULL,
    pg_catalog.jsonb_build_object('reason', pause_feed.reason, 'previous_reason', was));
  RETURN was IS NULL;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."pause_feed"(text, text) FROM PUBLIC;

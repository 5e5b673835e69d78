-- The SQL API refuses a feed that was never configured: `send_prescription(p, 'defualt')` would
-- otherwise leave a row pending forever that no worker, metric or command looks at. SQLSTATE 42704
-- (undefined_object), apart from 22023 (malformed) and 23502 (missing); the message names `feed`
-- and the (already validated, identifier-only) name, and says how a feed gets configured.
CREATE OR REPLACE FUNCTION "intake_sync"."_feed_configured_check"(feed text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM "intake_sync"."feed_checkpoints" c WHERE c."feed" = _feed_configured_check.feed) THEN
    RAISE EXCEPTION 'feed: % is not a configured feed (none of this deployment''s workers runs it; a feed is registered by `intake-sync migrate` and by `intake-sync run`)', feed
      USING ERRCODE = '42704', COLUMN = 'feed';
  END IF;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_feed_configured_check"(text) FROM PUBLIC;

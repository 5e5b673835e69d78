CREATE OR REPLACE FUNCTION "intake_sync"."_require_feed"(feed text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF feed IS NULL THEN
    RAISE EXCEPTION 'feed: required' USING ERRCODE = '23502', COLUMN = 'feed';
  END IF;
  IF feed !~ '^[a-z0-9_-]{1,64}$' THEN
    RAISE EXCEPTION 'feed: must be 1-64 of a-z 0-9 _ -' USING ERRCODE = '22023', COLUMN = 'feed';
  END IF;
  PERFORM "intake_sync"."_feed_configured_check"(feed);
  PERFORM "intake_sync"."_feed_access_check"(feed);
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_require_feed"(text) FROM PUBLIC;

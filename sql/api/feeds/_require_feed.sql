CREATE OR REPLACE FUNCTION "intake_sync"."_require_feed"(feed text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF feed IS NULL THEN
    RAISE EXCEPTION 'feed: required' USING ERRCODE = '23502', COLUMN = 'feed';
  END IF;
  IF feed !~ '^[a-z0-9_-]{1,64}$' THEN
    RAISE EXCEPTION 'feed: must be 1-64 of a-z 0-9 _ -' USING ERRCODE = '22023', COLUMN = 'feed';
  END IF;
  -- access before existence (issue 25 §7): a role restricted to some feeds gets the same 42501 for a
  -- feed it may not use whether or not that feed exists, so it cannot list the deployment's feeds;
  -- an unrestricted role (owner, runtime) still hears "not a configured feed" (42704)
  PERFORM "intake_sync"."_feed_access_check"(feed);
  PERFORM "intake_sync"."_feed_configured_check"(feed);
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_require_feed"(text) FROM PUBLIC;

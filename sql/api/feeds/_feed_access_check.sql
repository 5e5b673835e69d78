-- The per-feed gate of the SQL API's functions: a call for a feed the calling role may not use is refused (42501), naming
-- the feed and the role, and writes nothing.
CREATE OR REPLACE FUNCTION "intake_sync"."_feed_access_check"(feed text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  allowed text[] := "intake_sync"."_visible_feeds"();
BEGIN
  IF allowed IS NOT NULL AND NOT (_feed_access_check.feed = ANY (allowed)) THEN
    RAISE EXCEPTION 'feed: role % may not use feed "%"', pg_catalog.quote_ident("intake_sync"."_calling_role"()), _feed_access_check.feed
      USING ERRCODE = '42501', COLUMN = 'feed',
        HINT = 'the owner records the feeds an application role may use: intake-sync grants --role app --to ROLE --feed FEED (docs/security.md)';
  END IF;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_feed_access_check"(text) FROM PUBLIC;

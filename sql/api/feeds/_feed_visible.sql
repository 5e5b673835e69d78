-- The per-feed row filter: whether the calling role may see a feed's rows. Per row it costs a function call (a few microseconds): a view over
-- many rows filters with the two InitPlans the views below use instead (evaluated once per query).
CREATE OR REPLACE FUNCTION "intake_sync"."_feed_visible"(feed text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT v IS NULL OR _feed_visible.feed = ANY (v) FROM (SELECT "intake_sync"."_visible_feeds"() AS v) s
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_feed_visible"(text) FROM PUBLIC;

GRANT EXECUTE ON FUNCTION "intake_sync"."_feed_visible"(text) TO PUBLIC;

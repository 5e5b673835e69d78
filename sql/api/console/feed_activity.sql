-- Read by the operator console (docs/console.md) as the signed-in role, and by any application role:
-- identifiers, codes, counts and times only, never patient data. security_barrier and filtered by
-- the caller's feed access (_feed_visible).
-- Events received per hour over the last 24 hours, per visible feed (the console's chart).
-- The feed filter reads _visible_feeds() once per query (an initplan), not _feed_visible() once per
-- row: a function call per row cost ~80 us, seconds over 100k rows (bench:console, issue 29 §8). Each
-- visible feed's events are read by (feed, received_at) (events_feed_received_at_idx): a filter on
-- received_at alone has no index and read all 1M events (every feed with events has a checkpoint row:
-- the apply writes both in one transaction).
CREATE OR REPLACE VIEW "intake_sync"."feed_activity" WITH (security_barrier) AS
  SELECT c."feed", h."hour", h."events"
  FROM "intake_sync"."feed_checkpoints" c
  CROSS JOIN LATERAL (
    SELECT pg_catalog.date_trunc('hour', e."received_at") AS "hour", pg_catalog.count(*)::bigint AS "events"
    FROM "intake_sync"."events" e
    WHERE e."feed" = c."feed" AND e."received_at" > pg_catalog.now() - interval '24 hours'
    GROUP BY pg_catalog.date_trunc('hour', e."received_at")) h
  WHERE (SELECT "intake_sync"."_visible_feeds"()) IS NULL OR c."feed" = ANY ((SELECT "intake_sync"."_visible_feeds"())::text[]);

REVOKE ALL ON TABLE "intake_sync"."feed_activity" FROM PUBLIC;

COMMENT ON VIEW "intake_sync"."feed_activity" IS 'events received per hour over the last 24 h, per visible feed (docs/console.md)';

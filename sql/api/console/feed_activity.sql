-- Read by the operator console (docs/console.md) as the signed-in role, and by any application role:
-- identifiers, codes, counts and times only, never patient data. security_barrier and filtered by
-- the caller's feed access (_feed_visible).
-- Events received per hour over the last 24 hours, per visible feed (the console's chart).
-- The feed filter reads _visible_feeds() once per query (an initplan), not _feed_visible() once per
-- row: a function call per row cost ~80 us, seconds over 100k rows (bench:console, issue 29 §8).
CREATE OR REPLACE VIEW "intake_sync"."feed_activity" WITH (security_barrier) AS
  SELECT e."feed", pg_catalog.date_trunc('hour', e."received_at") AS "hour", pg_catalog.count(*)::bigint AS "events"
  FROM "intake_sync"."events" e
  WHERE e."received_at" > pg_catalog.now() - interval '24 hours' AND ((SELECT "intake_sync"."_visible_feeds"()) IS NULL OR e."feed" = ANY ((SELECT "intake_sync"."_visible_feeds"())::text[]))
  GROUP BY e."feed", pg_catalog.date_trunc('hour', e."received_at");

REVOKE ALL ON TABLE "intake_sync"."feed_activity" FROM PUBLIC;

COMMENT ON VIEW "intake_sync"."feed_activity" IS 'events received per hour over the last 24 h, per visible feed (docs/console.md)';

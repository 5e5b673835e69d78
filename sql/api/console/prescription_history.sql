-- Read by the operator console (docs/console.md) as the signed-in role, and by any application role:
-- identifiers, codes, counts and times only, never patient data. security_barrier and filtered by
-- the caller's feed access (_feed_visible).
-- A prescription's status timeline from the change feed, for visible feeds. "id" is the change's number
-- within its feed (feed_serial, 0032): a feed's ids order its changes as before, and count no other feed's.
-- The feed filter reads _visible_feeds() once per query (an initplan), not _feed_visible() once per
-- row: a function call per row cost ~80 us, seconds over 100k rows (bench:console, issue 29 §8).
CREATE OR REPLACE VIEW "intake_sync"."prescription_history" WITH (security_barrier) AS
  SELECT s."feed_serial" AS "id", s."feed", s."external_id", s."previous_status", s."new_status", s."event_id", s."occurred_at", s."changed_at"
  FROM "intake_sync"."status_changes" s
  WHERE ((SELECT "intake_sync"."_visible_feeds"()) IS NULL OR s."feed" = ANY ((SELECT "intake_sync"."_visible_feeds"())::text[]));

REVOKE ALL ON TABLE "intake_sync"."prescription_history" FROM PUBLIC;

COMMENT ON VIEW "intake_sync"."prescription_history" IS 'each visible prescription''s status changes in order (docs/console.md)';

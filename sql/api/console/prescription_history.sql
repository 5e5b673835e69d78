-- Read by the operator console (docs/console.md) as the signed-in role, and by any application role:
-- identifiers, codes, counts and times only, never patient data. security_barrier and filtered by
-- the caller's feed access (_feed_visible).
-- A prescription's status timeline from the change feed, for visible feeds.
CREATE OR REPLACE VIEW "intake_sync"."prescription_history" WITH (security_barrier) AS
  SELECT s."id", s."feed", s."external_id", s."previous_status", s."new_status", s."event_id", s."occurred_at", s."changed_at"
  FROM "intake_sync"."status_changes" s
  WHERE "intake_sync"."_feed_visible"(s."feed");

REVOKE ALL ON TABLE "intake_sync"."prescription_history" FROM PUBLIC;

COMMENT ON VIEW "intake_sync"."prescription_history" IS 'each visible prescription''s status changes in order (docs/console.md)';

-- A prescription registered after a cancellation of it was delivered (the outbox does not need the
-- registration) starts with cancel_delivered_at set, as _mark_cancel_delivered would have set it:
-- its status stage is never watched. One probe of the outbox's (feed, external_id) index per new row.
CREATE OR REPLACE FUNCTION "intake_sync"."_stamp_cancel_delivered"() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  SELECT pg_catalog.min(COALESCE(o."completed_at", o."updated_at")) INTO NEW."cancel_delivered_at"
  FROM "intake_sync"."outbox" o
  WHERE o."feed" = NEW."feed" AND o."external_id" = NEW."external_id" AND o."kind" = 'cancel' AND o."state" = 'delivered';
  RETURN NEW;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_stamp_cancel_delivered"() FROM PUBLIC;

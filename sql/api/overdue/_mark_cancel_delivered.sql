-- Records that the outbox delivered a cancellation (docs/sql-api/overdue.md): the prescription's
-- cancel_delivered_at (the first delivery), which takes it out of prescriptions_overdue_idx (its
-- status stage is replaced by `cancel_requested`), and answered_at on its sends, which takes them out
-- of outbox_awaiting_answer_idx (the `sent` stage ends too). So overdue_prescriptions reads index
-- ranges that hold only what can be overdue, with no probe per row. Two indexed updates per delivered
-- cancellation; called by outbox_cancel_delivered(_insert) only when a cancellation becomes delivered.
CREATE OR REPLACE FUNCTION "intake_sync"."_mark_cancel_delivered"() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE "intake_sync"."prescriptions" p
  SET "cancel_delivered_at" = COALESCE(NEW."completed_at", pg_catalog.now())
  WHERE p."feed" = NEW."feed" AND p."external_id" = NEW."external_id" AND p."cancel_delivered_at" IS NULL;
  UPDATE "intake_sync"."outbox" o SET "answered_at" = pg_catalog.now()
  WHERE o."feed" = NEW."feed" AND o."external_id" = NEW."external_id" AND o."kind" = 'send' AND o."answered_at" IS NULL;
  RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_mark_cancel_delivered"() FROM PUBLIC;

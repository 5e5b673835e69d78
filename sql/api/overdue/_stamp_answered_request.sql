-- A request queued for a prescription the operator has already answered (a send after its first
-- status, a cancellation after its terminal one) is answered from the start: it never enters the
-- overdue index (outbox_awaiting_answer_idx). So is a send queued after a cancellation of the same
-- prescription was delivered (_mark_cancel_delivered: the cancel_requested stage replaces it). One
-- lookup of prescriptions' unique key per queued row, and of the outbox's for a send that passes it.
CREATE OR REPLACE FUNCTION "intake_sync"."_stamp_answered_request"() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM "intake_sync"."prescriptions" p
      WHERE p."feed" = NEW."feed" AND p."external_id" = NEW."external_id"
        AND p."status_rank" >= CASE WHEN NEW."kind" = 'cancel' THEN 4 ELSE 1 END) THEN
    NEW."answered_at" := pg_catalog.now();
  ELSIF NEW."kind" = 'send' AND EXISTS (SELECT 1 FROM "intake_sync"."outbox" c
      WHERE c."feed" = NEW."feed" AND c."external_id" = NEW."external_id" AND c."kind" = 'cancel' AND c."state" = 'delivered') THEN
    NEW."answered_at" := pg_catalog.now();
  END IF;
  RETURN NEW;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_stamp_answered_request"() FROM PUBLIC;

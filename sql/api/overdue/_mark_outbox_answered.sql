-- Stamps outbox.answered_at when the operator has answered a request (docs/sql-api/overdue.md): a
-- prescription's first status answers its sends, a terminal status (rank 4 and up) its cancellations.
-- The overdue index (outbox_awaiting_answer_idx) then holds the open requests only, so the
-- `sent` and `cancel_requested` stages of overdue_prescriptions read a few rows, not every send ever
-- delivered. Rows of any state are stamped: a send answered before its delivery was recorded stays out
-- of the index once it is. Called by prescriptions_outbox_answered_insert for a prescription registered with a
-- status; updates go through _mark_outbox_answered_rows, once per statement.
CREATE OR REPLACE FUNCTION "intake_sync"."_mark_outbox_answered"() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE "intake_sync"."outbox" o SET "answered_at" = pg_catalog.now()
  WHERE o."feed" = NEW."feed" AND o."external_id" = NEW."external_id" AND o."answered_at" IS NULL
    AND (o."kind" = 'send' OR (o."kind" = 'cancel' AND NEW."status_rank" >= 4));
  RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_mark_outbox_answered"() FROM PUBLIC;

-- Stamps outbox.answered_at when the operator has answered a request (docs/sql-api/overdue.md): a
-- prescription's first status answers its sends, a terminal status (rank 4 and up) its cancellations.
-- The overdue index (outbox_awaiting_answer_idx) then holds the open requests only, so the
-- `sent` and `cancel_requested` stages of overdue_prescriptions read a few rows, not every send ever
-- delivered. Rows of any state are stamped: a send answered before its delivery was recorded stays out
-- of the index once it is. This is the insert side, once per statement over its new rows
-- (prescriptions_outbox_answered_insert: prescriptions registered with a status already, by held events
-- matched at registration): one update however many rows the statement inserted (issue 37: it was a row
-- trigger). Updates go through _mark_outbox_answered_rows, which reads the rank each row crossed.
CREATE OR REPLACE FUNCTION "intake_sync"."_mark_outbox_answered"() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE "intake_sync"."outbox" o SET "answered_at" = pg_catalog.now()
  FROM new_rows n
  WHERE n."status_rank" >= 1
    AND o."feed" = n."feed" AND o."external_id" = n."external_id" AND o."answered_at" IS NULL
    AND (o."kind" = 'send' OR (o."kind" = 'cancel' AND n."status_rank" >= 4));
  RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_mark_outbox_answered"() FROM PUBLIC;

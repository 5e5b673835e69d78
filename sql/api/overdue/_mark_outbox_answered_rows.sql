-- _mark_outbox_answered for a whole statement (issue 37): the status updates of one statement that answer
-- a request (the first status: sends; a terminal one, rank 4 and up: cancellations), read from its
-- transition tables, stamp the outbox in ONE set-based update. A page moves up to 250 prescriptions in
-- one statement; the row-level trigger it replaces queued an event and ran a function per changed row.
-- The join of old_rows to new_rows is the one the change trigger (record_status_changes) reads too: the
-- transition tables are captured once per statement for both.
CREATE OR REPLACE FUNCTION "intake_sync"."_mark_outbox_answered_rows"() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  UPDATE "intake_sync"."outbox" o SET "answered_at" = pg_catalog.now()
  FROM new_rows n JOIN old_rows p ON p."id" = n."id"
  WHERE ((p."status_rank" < 1 AND n."status_rank" >= 1) OR (p."status_rank" < 4 AND n."status_rank" >= 4))
    AND o."feed" = n."feed" AND o."external_id" = n."external_id" AND o."answered_at" IS NULL
    AND (o."kind" = 'send' OR (o."kind" = 'cancel' AND n."status_rank" >= 4));
  RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_mark_outbox_answered_rows"() FROM PUBLIC;

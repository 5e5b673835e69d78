-- A status update that answers a request (the first status: sends; a terminal one: cancellations)
-- stamps the outbox through _mark_outbox_answered; the WHEN clause keeps every other update free of it.
CREATE OR REPLACE TRIGGER "prescriptions_outbox_answered"
AFTER UPDATE OF "status_rank" ON "intake_sync"."prescriptions"
FOR EACH ROW
WHEN ((OLD."status_rank" < 1 AND NEW."status_rank" >= 1) OR (OLD."status_rank" < 4 AND NEW."status_rank" >= 4))
EXECUTE FUNCTION "intake_sync"."_mark_outbox_answered"();

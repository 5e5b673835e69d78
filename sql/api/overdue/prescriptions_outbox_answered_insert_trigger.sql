-- A prescription registered with a status already (held events matched at registration) answers the
-- requests sent for it before, as an update would (_mark_outbox_answered).
CREATE OR REPLACE TRIGGER "prescriptions_outbox_answered_insert"
AFTER INSERT ON "intake_sync"."prescriptions"
FOR EACH ROW
WHEN (NEW."status_rank" >= 1)
EXECUTE FUNCTION "intake_sync"."_mark_outbox_answered"();

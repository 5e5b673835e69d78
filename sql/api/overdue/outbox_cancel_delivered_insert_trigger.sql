-- A cancellation recorded as delivered when it is written (an import of a vendor's history, say)
-- counts as one delivered by an update would (_mark_cancel_delivered).
CREATE OR REPLACE TRIGGER "outbox_cancel_delivered_insert"
AFTER INSERT ON "intake_sync"."outbox"
FOR EACH ROW
WHEN (NEW."kind" = 'cancel' AND NEW."state" = 'delivered')
EXECUTE FUNCTION "intake_sync"."_mark_cancel_delivered"();

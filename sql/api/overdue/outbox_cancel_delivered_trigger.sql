-- A cancellation the outbox delivers ends its prescription's status and `sent` stages
-- (_mark_cancel_delivered); the WHEN clause keeps every other outbox update free of it.
CREATE OR REPLACE TRIGGER "outbox_cancel_delivered"
AFTER UPDATE OF "state" ON "intake_sync"."outbox"
FOR EACH ROW
WHEN (NEW."kind" = 'cancel' AND NEW."state" = 'delivered' AND OLD."state" IS DISTINCT FROM 'delivered')
EXECUTE FUNCTION "intake_sync"."_mark_cancel_delivered"();

-- Every new prescription is checked once for a cancellation already delivered (_stamp_cancel_delivered).
CREATE OR REPLACE TRIGGER "prescriptions_cancel_delivered"
BEFORE INSERT ON "intake_sync"."prescriptions"
FOR EACH ROW
WHEN (NEW."cancel_delivered_at" IS NULL)
EXECUTE FUNCTION "intake_sync"."_stamp_cancel_delivered"();

-- Every queued request is checked once against its prescription (_stamp_answered_request).
CREATE OR REPLACE TRIGGER "outbox_answered_request"
BEFORE INSERT ON "intake_sync"."outbox"
FOR EACH ROW
WHEN (NEW."answered_at" IS NULL)
EXECUTE FUNCTION "intake_sync"."_stamp_answered_request"();

-- Stamps prescriptions.terminal_at through _stamp_terminal_at (retention/prescription_terminal_at.sql),
-- only when a prescription ends: the WHEN clause keeps every other update free of the call.
CREATE OR REPLACE TRIGGER "prescriptions_terminal_at"
BEFORE INSERT OR UPDATE OF "status_rank", "cancellation_requested_at" ON "intake_sync"."prescriptions"
FOR EACH ROW
WHEN (NEW."terminal_at" IS NULL AND (NEW."status_rank" >= 4 OR NEW."cancellation_requested_at" IS NOT NULL))
EXECUTE FUNCTION "intake_sync"."_stamp_terminal_at"();

-- Numbers each new status_changes row within its feed (issue 33 §4, _number_in_feed), unless its writer
-- numbered it already: record_status_changes, the change trigger of every status update (a page's
-- included), draws the numbers from the same sequences in its own statement (issue 37: this row trigger
-- was a function call per change row). Only the owner writes status_changes (no role holds INSERT on
-- it; the change triggers run as the owner), so no application can choose its rows' numbers.
CREATE OR REPLACE TRIGGER "status_changes_feed_serial"
BEFORE INSERT ON "intake_sync"."status_changes"
FOR EACH ROW
WHEN (NEW."feed_serial" IS NULL)
EXECUTE FUNCTION "intake_sync"."_number_in_feed"('changes');

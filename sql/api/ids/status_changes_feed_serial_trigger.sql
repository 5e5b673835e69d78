-- Numbers each new status_changes row within its feed (issue 33 §4, _number_in_feed).
CREATE OR REPLACE TRIGGER "status_changes_feed_serial"
BEFORE INSERT ON "intake_sync"."status_changes"
FOR EACH ROW EXECUTE FUNCTION "intake_sync"."_number_in_feed"('changes');

-- Numbers each new audit_entries row within its feed (issue 33 §4, _number_in_feed).
CREATE OR REPLACE TRIGGER "audit_entries_feed_serial"
BEFORE INSERT ON "intake_sync"."audit_entries"
FOR EACH ROW EXECUTE FUNCTION "intake_sync"."_number_in_feed"('audit');

-- Numbers each new outbox row within its feed (issue 33 §4, _number_in_feed).
CREATE OR REPLACE TRIGGER "outbox_feed_serial"
BEFORE INSERT ON "intake_sync"."outbox"
FOR EACH ROW EXECUTE FUNCTION "intake_sync"."_number_in_feed"('outbox');

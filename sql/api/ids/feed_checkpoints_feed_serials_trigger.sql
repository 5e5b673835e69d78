-- Creates a newly registered feed's numbering sequences (issue 33 §4, _create_feed_serials).
CREATE OR REPLACE TRIGGER "feed_checkpoints_feed_serials"
AFTER INSERT ON "intake_sync"."feed_checkpoints"
FOR EACH ROW EXECUTE FUNCTION "intake_sync"."_create_feed_serials"();

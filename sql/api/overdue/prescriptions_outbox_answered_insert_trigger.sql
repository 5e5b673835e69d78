-- A prescription registered with a status already (held events matched at registration) answers the
-- requests sent for it before, as an update would (_mark_outbox_answered): once per statement over its
-- new rows, as the update side (prescriptions_outbox_answered), not a function call per row.
CREATE OR REPLACE TRIGGER "prescriptions_outbox_answered_insert"
AFTER INSERT ON "intake_sync"."prescriptions"
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT
EXECUTE FUNCTION "intake_sync"."_mark_outbox_answered"();

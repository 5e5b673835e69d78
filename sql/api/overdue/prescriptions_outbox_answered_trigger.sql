-- Status updates that answer a request (the first status: sends; a terminal one: cancellations) stamp the
-- outbox through _mark_outbox_answered_rows, once per statement over its transition tables (issue 37: it
-- was a row trigger, a function call per changed prescription of a page). A statement trigger cannot
-- name columns (UPDATE OF) with transition tables: the function's join keeps every other update free of writes.
CREATE OR REPLACE TRIGGER "prescriptions_outbox_answered"
AFTER UPDATE ON "intake_sync"."prescriptions"
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT
EXECUTE FUNCTION "intake_sync"."_mark_outbox_answered_rows"();

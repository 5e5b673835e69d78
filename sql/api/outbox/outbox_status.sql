-- "id" is the row's number within its feed (feed_serial, 0032), what send_prescription and
-- cancel_prescription return: unique with the feed, in the order the feed's rows were written, and
-- counting no other feed's rows (issue 33 §4).
-- A security barrier (issue 25 §1): the caller's own predicates, casts and functions run only on
-- rows the feed filter kept. CREATE OR REPLACE VIEW resets a view's options, so the WITH stays here
-- (test/sql-api/feeds/views-are-barriers.test.ts fails without it).
CREATE OR REPLACE VIEW "intake_sync"."outbox_status" WITH (security_barrier) AS
SELECT o."feed_serial" AS "id", o."external_id", o."kind", o."state", o."attempts", o."last_error", o."response_status", o."in_doubt",
       o."next_attempt_at", o."created_at", o."updated_at", o."last_attempt_at", o."completed_at", o."feed"
FROM "intake_sync"."outbox" o
WHERE (SELECT "intake_sync"."_visible_feeds"()) IS NULL
  OR o."feed" = ANY (((SELECT "intake_sync"."_visible_feeds"()))::text[]);

REVOKE ALL ON "intake_sync"."outbox_status" FROM PUBLIC;

-- The views show the calling role's feeds only. Same columns, same order (CREATE OR REPLACE keeps
-- their grants); the filter's InitPlans run once per query, not once per row.
-- A security barrier (issue 25 §1): the caller's own predicates, casts and functions run only on
-- rows the feed filter kept. CREATE OR REPLACE VIEW resets a view's options, so the WITH stays here
-- (test/sql-api/feeds/views-are-barriers.test.ts fails without it).
CREATE OR REPLACE VIEW "intake_sync"."prescription_status" WITH (security_barrier) AS
SELECT p.external_id, p.status, p.status_occurred_at, p.cancellation_requested_at,
  (SELECT count(*) FROM "intake_sync"."events" e WHERE e.prescription_id = p.id)::integer AS events,
  p.updated_at, p.subscription_id, p.feed
FROM "intake_sync"."prescriptions" p
WHERE (SELECT "intake_sync"."_visible_feeds"()) IS NULL
  OR p.feed = ANY (((SELECT "intake_sync"."_visible_feeds"()))::text[]);

COMMENT ON VIEW "intake_sync"."prescription_status" IS 'each local prescription''s current status and how many distinct events were applied to it (docs/sql-api/register.md)';

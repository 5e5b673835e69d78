-- The open quarantine for applications: what is waiting and why, never who it is about (the
-- identity is in show_quarantined(), which is audited). quarantine_key is what dismiss_quarantined()
-- takes for a malformed event that had no usable id (event_id null); for every other finding it is
-- the event id.
-- A security barrier (issue 25 §1): the caller's own predicates, casts and functions run only on
-- rows the feed filter kept. CREATE OR REPLACE VIEW resets a view's options, so the WITH stays here
-- (test/sql-api/feeds/views-are-barriers.test.ts fails without it).
-- subscription_id (the operator console groups and searches by it) is the last column, so a CREATE OR
-- REPLACE over the older view keeps every earlier column where it was.
-- The feed filter reads _visible_feeds() once per query (an initplan), not _feed_visible() once per
-- row: a function call per row cost ~80 us, seconds over 100k rows (bench:console, issue 29 §8).
CREATE OR REPLACE VIEW "intake_sync"."quarantine_open" WITH (security_barrier) AS
  SELECT q."feed", q."event_id", q."reason", e."name" AS "event_name", e."occurred_at", q."first_seen_at" AS "held_since",
    q."detail", q."seen_count", q."quarantine_key", e."subscription_id"
  FROM "intake_sync"."quarantine" q
  LEFT JOIN "intake_sync"."events" e ON e."feed" = q."feed" AND e."id" = q."event_id"
  WHERE q."resolved_at" IS NULL AND ((SELECT "intake_sync"."_visible_feeds"()) IS NULL OR q."feed" = ANY ((SELECT "intake_sync"."_visible_feeds"())::text[]));

REVOKE ALL ON TABLE "intake_sync"."quarantine_open" FROM PUBLIC;

COMMENT ON VIEW "intake_sync"."quarantine_open" IS 'open quarantine findings, no identity fields (docs/sql-api/triage.md)';

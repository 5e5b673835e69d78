-- Read by the operator console (docs/console.md) as the signed-in role, and by any application role:
-- identifiers, codes, counts and times only, never patient data. security_barrier and filtered by
-- the caller's feed access (_feed_visible).
-- The audit trail of the visible feeds. "id" is the row's number within its feed (feed_serial, 0032),
-- unique with the feed: a global id would count every other feed's audit rows (issue 33 §4). A row naming no feed (migrate, grants) is shown only to a
-- role that sees every feed.
-- The feed filter reads _visible_feeds() once per query (an initplan), not _feed_visible() once per
-- row: a function call per row cost ~80 us, seconds over 100k rows (bench:console, issue 29 §8).
CREATE OR REPLACE VIEW "intake_sync"."audit_trail" WITH (security_barrier) AS
  SELECT a."feed_serial" AS "id", a."at", a."actor", a."on_behalf_of", a."action", a."feed", a."subject", a."detail"
  FROM "intake_sync"."audit_entries" a
  WHERE CASE WHEN a."feed" IS NULL THEN (SELECT "intake_sync"."_visible_feeds"()) IS NULL
    ELSE ((SELECT "intake_sync"."_visible_feeds"()) IS NULL OR a."feed" = ANY ((SELECT "intake_sync"."_visible_feeds"())::text[])) END;

-- a function a view calls is checked against the caller's privileges: every reader must be able
-- to run the filter (it only answers which feeds the caller may see)
GRANT EXECUTE ON FUNCTION "intake_sync"."_visible_feeds"() TO PUBLIC;

REVOKE ALL ON TABLE "intake_sync"."audit_trail" FROM PUBLIC;

COMMENT ON VIEW "intake_sync"."audit_trail" IS 'audit rows of the visible feeds (rows with no feed: roles that see every feed only) (docs/console.md)';

-- The operator console (issue 29, docs/console.md) reads only the SQL API, as the signed-in role:
-- these views give it what an application role may see of its own feeds (each filtered by
-- _feed_visible, security_barrier so no caller-supplied function sees another feed's rows first),
-- and the indexes keep its quarantine and audit searches off sequential scans at size.
-- Identifiers, codes, counts and times only: never patient data.
--
-- quarantine_open gains the finding's subscription (the console groups and searches by it); a
-- column added at the end keeps every existing reader's columns as they were.
CREATE OR REPLACE VIEW "intake_sync"."quarantine_open" WITH (security_barrier) AS
  SELECT q."feed", q."event_id", q."reason", e."name" AS "event_name", e."occurred_at", q."first_seen_at" AS "held_since",
    q."detail", q."seen_count", q."quarantine_key", e."subscription_id"
  FROM "intake_sync"."quarantine" q
  LEFT JOIN "intake_sync"."events" e ON e."feed" = q."feed" AND e."id" = q."event_id"
  WHERE q."resolved_at" IS NULL AND "intake_sync"."_feed_visible"(q."feed");
--> statement-breakpoint
-- One row per registered feed the caller may see: the position's counters, when it last moved, the
-- newest applied event, open findings by reason and the outbox's pending and failed rows.
CREATE VIEW "intake_sync"."feed_overview" WITH (security_barrier) AS
  SELECT c."feed", c."origin", c."version", c."updated_at" AS "position_moved_at", c."pages_applied", c."events_applied",
    c."events_quarantined",
    (SELECT pg_catalog.max(e."received_at") FROM "intake_sync"."events" e WHERE e."feed" = c."feed") AS "last_event_received_at",
    (SELECT e."occurred_at" FROM "intake_sync"."events" e WHERE e."feed" = c."feed" ORDER BY e."received_at" DESC LIMIT 1) AS "last_event_occurred_at",
    COALESCE((SELECT pg_catalog.jsonb_object_agg(r."reason", r."n") FROM (
        SELECT q."reason", pg_catalog.count(*) AS "n" FROM "intake_sync"."quarantine" q
        WHERE q."feed" = c."feed" AND q."resolved_at" IS NULL GROUP BY q."reason") r), '{}'::jsonb) AS "open_findings",
    (SELECT pg_catalog.count(*) FROM "intake_sync"."outbox" o WHERE o."feed" = c."feed" AND o."state" = 'pending')::bigint AS "outbox_pending",
    (SELECT pg_catalog.count(*) FROM "intake_sync"."outbox" o WHERE o."feed" = c."feed" AND o."state" = 'failed')::bigint AS "outbox_failed"
  FROM "intake_sync"."feed_checkpoints" c
  WHERE "intake_sync"."_feed_visible"(c."feed");
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."feed_overview" FROM PUBLIC;
--> statement-breakpoint
COMMENT ON VIEW "intake_sync"."feed_overview" IS 'each visible feed: position, last applied event, open findings by reason, outbox pending/failed (docs/console.md)';
--> statement-breakpoint
-- Events received per hour over the last 24 hours, per visible feed (the console's chart).
CREATE VIEW "intake_sync"."feed_activity" WITH (security_barrier) AS
  SELECT e."feed", pg_catalog.date_trunc('hour', e."received_at") AS "hour", pg_catalog.count(*)::bigint AS "events"
  FROM "intake_sync"."events" e
  WHERE e."received_at" > pg_catalog.now() - interval '24 hours' AND "intake_sync"."_feed_visible"(e."feed")
  GROUP BY e."feed", pg_catalog.date_trunc('hour', e."received_at");
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."feed_activity" FROM PUBLIC;
--> statement-breakpoint
COMMENT ON VIEW "intake_sync"."feed_activity" IS 'events received per hour over the last 24 h, per visible feed (docs/console.md)';
--> statement-breakpoint
-- The audit trail of the visible feeds. A row naming no feed (migrate, grants) is shown only to a
-- role that sees every feed.
CREATE VIEW "intake_sync"."audit_trail" WITH (security_barrier) AS
  SELECT a."id", a."at", a."actor", a."on_behalf_of", a."action", a."feed", a."subject", a."detail"
  FROM "intake_sync"."audit_entries" a
  WHERE CASE WHEN a."feed" IS NULL THEN (SELECT "intake_sync"."_visible_feeds"()) IS NULL
    ELSE "intake_sync"."_feed_visible"(a."feed") END;
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."audit_trail" FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION "intake_sync"."_visible_feeds"() TO PUBLIC;
--> statement-breakpoint
COMMENT ON VIEW "intake_sync"."audit_trail" IS 'audit rows of the visible feeds (rows with no feed: roles that see every feed only) (docs/console.md)';
--> statement-breakpoint
-- A prescription's status timeline from the change feed, for visible feeds.
CREATE VIEW "intake_sync"."prescription_history" WITH (security_barrier) AS
  SELECT s."id", s."feed", s."external_id", s."previous_status", s."new_status", s."event_id", s."occurred_at", s."changed_at"
  FROM "intake_sync"."status_changes" s
  WHERE "intake_sync"."_feed_visible"(s."feed");
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."prescription_history" FROM PUBLIC;
--> statement-breakpoint
COMMENT ON VIEW "intake_sync"."prescription_history" IS 'each visible prescription''s status changes in order (docs/console.md)';
--> statement-breakpoint
-- The console's quarantine list: open findings oldest first, keyset-paged on (held_since, feed, key).
CREATE INDEX "quarantine_open_held_idx" ON "intake_sync"."quarantine" USING btree ("first_seen_at", "feed", "quarantine_key") WHERE "resolved_at" IS NULL;
--> statement-breakpoint
-- Search by event id across feeds (the unique index leads with feed).
CREATE INDEX "quarantine_open_event_idx" ON "intake_sync"."quarantine" USING btree ("event_id") WHERE "resolved_at" IS NULL;
--> statement-breakpoint
-- A prescription's timeline.
CREATE INDEX "status_changes_external_id_idx" ON "intake_sync"."status_changes" USING btree ("feed", "external_id", "id");
--> statement-breakpoint
-- Search of local prescriptions by external id (any feed).
CREATE INDEX "prescriptions_external_id_idx" ON "intake_sync"."prescriptions" USING btree ("external_id");

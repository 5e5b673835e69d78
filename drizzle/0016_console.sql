-- The operator console (issue 29, docs/console.md): indexes that keep its quarantine list and searches,
-- and a prescription's timeline, off sequential scans at size. Its views are SQL API files
-- (sql/api/console/, sql/api/triage/quarantine_open.sql).
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

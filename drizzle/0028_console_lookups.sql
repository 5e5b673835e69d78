-- Issue 34 §5/§6: quarantine_page gains `backward` (the quarantine list's Previous page). A CREATE OR
-- REPLACE with another argument list would add a second function beside the old one, so the 9-argument
-- version goes here; sql/api/triage/quarantine_page.sql creates the new one right after (IF EXISTS: an
-- install whose SQL API was never applied has none). Roles granted EXECUTE on the old signature need
-- `intake-sync grants` again (CHANGELOG).
DROP FUNCTION IF EXISTS "intake_sync"."quarantine_page"(text, text, text, timestamptz, text, timestamptz, text, text, integer);
--> statement-breakpoint
-- The console's Search and a prescription's page find the events of a subscription (then their open
-- findings) by index: events_held_subscription_idx covers held events only, and an open finding's event
-- can be applied (a finding reopened when its event is seen again), so that index could not answer.
CREATE INDEX IF NOT EXISTS "events_subscription_feed_idx" ON "intake_sync"."events" USING btree ("subscription_id", "feed");

-- Issue 27 §6: dismiss_quarantined gains only_this_event (default false: the whole subscription) and
-- returns the count it closed. A CREATE OR REPLACE with another argument list would add a second
-- function beside the old one, so the 3-argument version goes here; sql/api/triage/dismiss_quarantined.sql
-- creates the new one right after (IF EXISTS: an install whose SQL API was never applied has none).
-- Roles granted EXECUTE on the old signature need `intake-sync grants` again (CHANGELOG).
DROP FUNCTION IF EXISTS "intake_sync"."dismiss_quarantined"(text, text, text);

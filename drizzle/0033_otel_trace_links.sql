-- Trace links across the asynchronous hops (issue 38, docs/operations.md "Tracing"). Each column's default
-- reads the transaction-local setting intake_sync.traceparent (src/db/schema/trace-context-defaults.ts):
-- the page transaction sets it from its span, an app for its own transaction. A default that reads a
-- STABLE function is evaluated once for the rows already there (null): no table is rewritten.
-- status_changes.trace_id: the trace of the transaction that changed the status (status_changes_since returns it)
ALTER TABLE "intake_sync"."status_changes" ADD COLUMN "trace_id" text DEFAULT pg_catalog.substr(CASE WHEN pg_catalog.current_setting('intake_sync.traceparent', true) ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' AND pg_catalog.substr(pg_catalog.current_setting('intake_sync.traceparent', true), 4, 32) <> '00000000000000000000000000000000' AND pg_catalog.substr(pg_catalog.current_setting('intake_sync.traceparent', true), 37, 16) <> '0000000000000000' THEN pg_catalog.current_setting('intake_sync.traceparent', true) END, 4, 32);--> statement-breakpoint
-- outbox.traceparent: the app's transaction that queued the row; its delivery span links to it
ALTER TABLE "intake_sync"."outbox" ADD COLUMN "traceparent" text DEFAULT CASE WHEN pg_catalog.current_setting('intake_sync.traceparent', true) ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' AND pg_catalog.substr(pg_catalog.current_setting('intake_sync.traceparent', true), 4, 32) <> '00000000000000000000000000000000' AND pg_catalog.substr(pg_catalog.current_setting('intake_sync.traceparent', true), 37, 16) <> '0000000000000000' THEN pg_catalog.current_setting('intake_sync.traceparent', true) END;--> statement-breakpoint
-- outbox.delivery_traceparent: the delivery span of the row's latest claim; the page that applies its events links to it
ALTER TABLE "intake_sync"."outbox" ADD COLUMN "delivery_traceparent" text;--> statement-breakpoint
-- the change feed's rows carry the trace id (a new attribute at the end: `select *` callers get one more column)
ALTER TYPE "intake_sync"."status_change" ADD ATTRIBUTE "trace_id" text;--> statement-breakpoint
-- a traced page finds the deliveries it answers by its own trace id; rows of an untraced transaction are
-- not indexed (tracing off costs nothing). Built in the migration's transaction: it reads status_changes
-- once, holding writes back meanwhile (docs/upgrading.md)
CREATE INDEX "status_changes_trace_id_idx" ON "intake_sync"."status_changes" USING btree ("trace_id") WHERE "trace_id" IS NOT NULL;

-- Issue 26: the statistics task's ANALYZE read every sampled event body in full (json keeps no
-- statistics but its width, and measuring that detoasts each value): one pass cost about 2 s of CPU
-- early in a drain, 10.6% of a 200k-event drain. No query plans on these columns (they are carried,
-- never searched), so ANALYZE skips them; the columns beside them keep their statistics.
ALTER TABLE "intake_sync"."events" ALTER COLUMN "raw" SET STATISTICS 0;--> statement-breakpoint
ALTER TABLE "intake_sync"."events" ALTER COLUMN "payload" SET STATISTICS 0;--> statement-breakpoint
ALTER TABLE "intake_sync"."quarantine" ALTER COLUMN "raw" SET STATISTICS 0;--> statement-breakpoint
ALTER TABLE "intake_sync"."outbox" ALTER COLUMN "body" SET STATISTICS 0;

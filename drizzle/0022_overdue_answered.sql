DROP INDEX "intake_sync"."outbox_overdue_idx";--> statement-breakpoint
ALTER TABLE "intake_sync"."outbox" ADD COLUMN "answered_at" timestamp with time zone;--> statement-breakpoint
-- requests the operator already answered before this column existed: a send whose prescription has a
-- status, a cancellation whose prescription reached a terminal one (from here on, triggers stamp them)
UPDATE "intake_sync"."outbox" o SET "answered_at" = now()
WHERE EXISTS (SELECT 1 FROM "intake_sync"."prescriptions" p
  WHERE p."feed" = o."feed" AND p."external_id" = o."external_id"
    AND p."status_rank" >= CASE WHEN o."kind" = 'cancel' THEN 4 ELSE 1 END);--> statement-breakpoint
CREATE INDEX "outbox_awaiting_answer_idx" ON "intake_sync"."outbox" USING btree ("feed","kind","completed_at") WHERE state = 'delivered' AND answered_at IS NULL;--> statement-breakpoint
ALTER TABLE "intake_sync"."feed_deadlines" ADD CONSTRAINT "feed_deadlines_stage_check" CHECK ("stage" IN ('sent', 'accepted', 'ordered', 'dispensed', 'cancel_requested'));
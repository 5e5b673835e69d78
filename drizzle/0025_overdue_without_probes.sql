DROP INDEX "intake_sync"."prescriptions_overdue_idx";--> statement-breakpoint
ALTER TABLE "intake_sync"."prescriptions" ADD COLUMN "cancel_delivered_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "prescriptions_overdue_idx" ON "intake_sync"."prescriptions" USING btree ("feed","status","status_occurred_at") WHERE status_rank between 1 and 3 AND cancel_delivered_at IS NULL;--> statement-breakpoint
-- cancellations delivered before this column existed (from here on, _mark_cancel_delivered stamps them)
UPDATE "intake_sync"."prescriptions" p SET "cancel_delivered_at" = c."first_delivered"
FROM (SELECT o."feed", o."external_id", min(coalesce(o."completed_at", o."updated_at")) AS "first_delivered"
      FROM "intake_sync"."outbox" o WHERE o."kind" = 'cancel' AND o."state" = 'delivered'
      GROUP BY o."feed", o."external_id") c
WHERE p."feed" = c."feed" AND p."external_id" = c."external_id";--> statement-breakpoint
-- a send whose prescription's cancellation was delivered no longer awaits an answer: the
-- cancel_requested stage replaces it (stamped by _mark_cancel_delivered from here on)
UPDATE "intake_sync"."outbox" o SET "answered_at" = now()
WHERE o."kind" = 'send' AND o."answered_at" IS NULL
  AND EXISTS (SELECT 1 FROM "intake_sync"."outbox" c
    WHERE c."feed" = o."feed" AND c."external_id" = o."external_id" AND c."kind" = 'cancel' AND c."state" = 'delivered');

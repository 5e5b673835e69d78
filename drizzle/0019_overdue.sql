CREATE TABLE "intake_sync"."feed_deadlines" (
	"feed" text NOT NULL,
	"stage" text NOT NULL,
	"deadline" interval,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "feed_deadlines_feed_stage_pk" PRIMARY KEY("feed","stage")
);
--> statement-breakpoint
CREATE INDEX "outbox_overdue_idx" ON "intake_sync"."outbox" USING btree ("feed","kind","completed_at") WHERE state = 'delivered';--> statement-breakpoint
CREATE INDEX "prescriptions_overdue_idx" ON "intake_sync"."prescriptions" USING btree ("feed","status","status_occurred_at") WHERE status_rank between 1 and 3;
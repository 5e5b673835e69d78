CREATE TABLE "intake_sync"."feed_pauses" (
	"feed" text PRIMARY KEY NOT NULL,
	"reason" text NOT NULL,
	"paused_by" text NOT NULL,
	"paused_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "feed_pauses_reason_code" CHECK ("intake_sync"."feed_pauses"."reason" ~ '^[a-z][a-z0-9_.-]{0,63}$')
);
--> statement-breakpoint
CREATE TABLE "intake_sync"."feed_retirements" (
	"feed" text PRIMARY KEY NOT NULL,
	"retired_at" timestamp with time zone DEFAULT now() NOT NULL
);

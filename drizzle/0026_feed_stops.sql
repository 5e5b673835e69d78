CREATE TABLE "intake_sync"."feed_stops" (
	"feed" text PRIMARY KEY NOT NULL,
	"stopped_at" timestamp with time zone DEFAULT now() NOT NULL,
	"reason" text NOT NULL,
	"command" text,
	CONSTRAINT "feed_stops_reason_length" CHECK (char_length("intake_sync"."feed_stops"."reason") BETWEEN 1 AND 1000),
	CONSTRAINT "feed_stops_command_length" CHECK (char_length("intake_sync"."feed_stops"."command") <= 300)
);

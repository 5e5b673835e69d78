-- API version migration (issue 11 part 2): the operator base URLs a feed reads while it moves to
-- another version (a draining source keeps its own position until retired; the current source's
-- position stays the feed's checkpoint), and `subscriptions migrate` progress per prescription.
CREATE TABLE "intake_sync"."feed_sources" (
	"feed" text NOT NULL,
	"base_url" text NOT NULL,
	"api_version" text NOT NULL,
	"state" text NOT NULL,
	"iterator" text,
	"version" bigint DEFAULT 0 NOT NULL,
	"pages_applied" bigint DEFAULT 0 NOT NULL,
	"events_applied" bigint DEFAULT 0 NOT NULL,
	"migration_completed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"draining_since" timestamp with time zone,
	"retired_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "feed_sources_pk" PRIMARY KEY("feed","base_url")
);
--> statement-breakpoint
CREATE TABLE "intake_sync"."subscription_migrations" (
	"feed" text NOT NULL,
	"external_id" text NOT NULL,
	"target_version" text NOT NULL,
	"old_subscription_ids" jsonb NOT NULL,
	"new_subscription_id" text,
	"state" text DEFAULT 'pending' NOT NULL,
	"duplicate_possible" boolean DEFAULT false NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "subscription_migrations_pk" PRIMARY KEY("feed","external_id","target_version")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "feed_sources_one_current_key" ON "intake_sync"."feed_sources" USING btree ("feed") WHERE state = 'current';
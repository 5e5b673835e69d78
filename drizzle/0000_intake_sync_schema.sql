CREATE SCHEMA IF NOT EXISTS "intake_sync";
--> statement-breakpoint
CREATE TABLE "intake_sync"."change_clock" (
	"id" integer PRIMARY KEY NOT NULL,
	"last_seq" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "intake_sync"."change_commits" (
	"xid" "xid8" PRIMARY KEY NOT NULL,
	"commit_seq" bigint,
	"committed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "intake_sync"."checkpoint_resets" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"feed" text NOT NULL,
	"from_iterator" text,
	"to_iterator" text,
	"reset_by" text NOT NULL,
	"reset_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "intake_sync"."events" (
	"id" text PRIMARY KEY NOT NULL,
	"feed" text NOT NULL,
	"name" text NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"subscription_id" text NOT NULL,
	"api_version" text NOT NULL,
	"payload" jsonb,
	"raw" json NOT NULL,
	"identity_key" text NOT NULL,
	"erx_message_id" text,
	"status_rank" integer,
	"prescription_id" bigint,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "intake_sync"."feed_checkpoints" (
	"feed" text PRIMARY KEY NOT NULL,
	"iterator" text,
	"version" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"pages_applied" bigint DEFAULT 0 NOT NULL,
	"events_applied" bigint DEFAULT 0 NOT NULL,
	"events_quarantined" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "intake_sync"."outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"external_id" text NOT NULL,
	"kind" text NOT NULL,
	"body" jsonb,
	"state" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"in_doubt" boolean DEFAULT false NOT NULL,
	"last_error" text,
	"response_status" integer,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_attempt_at" timestamp with time zone,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "intake_sync"."prescriptions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"external_id" text NOT NULL,
	"patient_first_name" text NOT NULL,
	"patient_last_name" text NOT NULL,
	"patient_state" text NOT NULL,
	"patient_dob" text NOT NULL,
	"prescriber_npi" text NOT NULL,
	"written_date" text NOT NULL,
	"drug_ndc" text NOT NULL,
	"erx_message_id" text,
	"identity_key" text NOT NULL,
	"status" text,
	"status_rank" integer DEFAULT 0 NOT NULL,
	"status_occurred_at" timestamp with time zone,
	"status_event_id" text,
	"cancellation_requested_at" timestamp with time zone,
	"subscription_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "intake_sync"."quarantine" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"quarantine_key" text NOT NULL,
	"event_id" text,
	"feed" text NOT NULL,
	"reason" text NOT NULL,
	"detail" text NOT NULL,
	"raw" jsonb NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"seen_count" integer DEFAULT 1 NOT NULL,
	"resolved_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "intake_sync"."status_changes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"xid" "xid8" DEFAULT pg_current_xact_id() NOT NULL,
	"prescription_id" bigint NOT NULL,
	"external_id" text NOT NULL,
	"previous_status" text,
	"new_status" text NOT NULL,
	"event_id" text,
	"occurred_at" timestamp with time zone,
	"changed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "change_commits_commit_seq_key" ON "intake_sync"."change_commits" USING btree ("commit_seq");--> statement-breakpoint
CREATE INDEX "events_prescription_id_idx" ON "intake_sync"."events" USING btree ("prescription_id");--> statement-breakpoint
CREATE INDEX "outbox_pending_idx" ON "intake_sync"."outbox" USING btree ("external_id","id") WHERE state = 'pending';--> statement-breakpoint
CREATE INDEX "outbox_external_id_idx" ON "intake_sync"."outbox" USING btree ("external_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "prescriptions_external_id_key" ON "intake_sync"."prescriptions" USING btree ("external_id");--> statement-breakpoint
CREATE INDEX "prescriptions_identity_key_idx" ON "intake_sync"."prescriptions" USING btree ("identity_key");--> statement-breakpoint
CREATE INDEX "prescriptions_erx_message_id_idx" ON "intake_sync"."prescriptions" USING btree ("erx_message_id");--> statement-breakpoint
CREATE UNIQUE INDEX "quarantine_key_key" ON "intake_sync"."quarantine" USING btree ("quarantine_key");--> statement-breakpoint
CREATE INDEX "quarantine_open_idx" ON "intake_sync"."quarantine" USING btree ("reason") WHERE resolved_at is null;--> statement-breakpoint
CREATE INDEX "status_changes_xid_idx" ON "intake_sync"."status_changes" USING btree ("xid","id");
-- Issue 25 (items 4, 5, 10). Identities do not outlive their purpose: a prescription that ended
-- (delivered, rejected, or its cancellation requested) keeps its identity (the patient and prescription
-- fields, the identity key) for RETAIN_TERMINAL_IDENTITIES, counted from terminal_at; then the retention
-- cleaner's class terminal_identities (sql/api, _purge) sets them null, keeping external_id and status.
-- terminal_at is set once by the trigger prescription_terminal_at (sql/api); existing rows that ended
-- are counted from their last update. The owner's settings the SQL API trusts (owner_settings): the
-- audit retention floor _purge_audit applies whatever its caller asks.
ALTER TABLE "intake_sync"."prescriptions" ALTER COLUMN "patient_first_name" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "intake_sync"."prescriptions" ALTER COLUMN "patient_last_name" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "intake_sync"."prescriptions" ALTER COLUMN "patient_state" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "intake_sync"."prescriptions" ALTER COLUMN "patient_dob" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "intake_sync"."prescriptions" ALTER COLUMN "prescriber_npi" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "intake_sync"."prescriptions" ALTER COLUMN "written_date" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "intake_sync"."prescriptions" ALTER COLUMN "drug_ndc" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "intake_sync"."prescriptions" ALTER COLUMN "identity_key" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "intake_sync"."prescriptions" ADD COLUMN "terminal_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "prescriptions_identity_due_idx" ON "intake_sync"."prescriptions" USING btree ("feed","terminal_at") WHERE "intake_sync"."prescriptions"."terminal_at" IS NOT NULL AND "intake_sync"."prescriptions"."identity_key" IS NOT NULL;
--> statement-breakpoint
UPDATE "intake_sync"."prescriptions" SET "terminal_at" = "updated_at"
WHERE "terminal_at" IS NULL AND ("status_rank" >= 4 OR "cancellation_requested_at" IS NOT NULL);
--> statement-breakpoint
-- Settings only the owner writes (`intake-sync migrate`, or `run` with MIGRATE_ON_START, from the
-- owner's environment) and the SECURITY DEFINER functions read: no other role has any privilege on it.
-- retain_audit_ms: RETAIN_AUDIT in ms, or `forever`.
CREATE TABLE "intake_sync"."owner_settings" (
  "name" text PRIMARY KEY,
  "value" text NOT NULL,
  "updated_at" timestamptz NOT NULL DEFAULT pg_catalog.now(),
  CONSTRAINT "owner_settings_name_check" CHECK ("name" ~ '^[a-z][a-z0-9_]{0,63}$'),
  CONSTRAINT "owner_settings_value_check" CHECK (pg_catalog.length("value") <= 256)
);
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."owner_settings" FROM PUBLIC;

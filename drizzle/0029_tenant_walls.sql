-- Issue 33 §5-§6: what an application role could learn about other tenants, and grants that drifted.
--
-- 1. No statistics on the columns the application views read (§4): done by the SQL API file
--    statistics/_view_columns_without_statistics.sql, which runs after every view exists (a fresh
--    install creates the console's views after the migrations) and again before each ANALYZE.
-- 2. feed_access keeps the role's name beside its OID (§6). A dropped role's rows are removed here
--    and by _forget_dropped_roles() (migrate, grants; doctor lists them); a row whose OID names
--    another role (renamed, or the OID taken again) restricts that role to no feed (_visible_feeds).
ALTER TABLE "intake_sync"."feed_access" ADD COLUMN "role_name" text;--> statement-breakpoint
UPDATE "intake_sync"."feed_access" a SET "role_name" = r.rolname
FROM pg_catalog.pg_roles r WHERE r.oid = a."role"::oid;--> statement-breakpoint
DELETE FROM "intake_sync"."feed_access" WHERE "role_name" IS NULL;--> statement-breakpoint
ALTER TABLE "intake_sync"."feed_access" ALTER COLUMN "role_name" SET NOT NULL;--> statement-breakpoint
-- 3. A malformed finding's key is no longer sha256:<hex of its body>, which anyone holding the
--    key could confirm a guessed body against (a DOB in 84 ms) (§5). It is `k:` and the sha256 of a
--    secret followed by that digest: the secret is random, per database, and only the owner reads it
--    (the runtime role derives keys through _finding_key(), which applications may not run).
CREATE TABLE "intake_sync"."finding_key_secret" (
  "only" boolean PRIMARY KEY DEFAULT true CHECK ("only"),
  "secret" bytea NOT NULL,
  "created_at" timestamptz NOT NULL DEFAULT pg_catalog.now()
);--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."finding_key_secret" FROM PUBLIC;--> statement-breakpoint
-- 32 random bytes from two version-4 UUIDs (gen_random_uuid: core since PostgreSQL 13, a CSPRNG)
INSERT INTO "intake_sync"."finding_key_secret" ("secret")
VALUES (pg_catalog.decode(pg_catalog.replace(pg_catalog.gen_random_uuid()::text || pg_catalog.gen_random_uuid()::text, '-', ''), 'hex'));--> statement-breakpoint
-- Existing findings re-keyed, and every audit row naming an old key (quarantine.dismiss,
-- event.skip, quarantine.reveal …) rewritten to the new one, so a finding's history still resolves.
CREATE TEMPORARY TABLE "finding_rekey" ON COMMIT DROP AS
SELECT q."feed", q."quarantine_key" AS "old_key",
  'k:' || pg_catalog.encode(pg_catalog.sha256(s."secret" || pg_catalog.convert_to(q."quarantine_key", 'UTF8')), 'hex') AS "new_key"
FROM "intake_sync"."quarantine" q CROSS JOIN "intake_sync"."finding_key_secret" s
WHERE q."quarantine_key" LIKE 'sha256:%';--> statement-breakpoint
UPDATE "intake_sync"."quarantine" q SET "quarantine_key" = k."new_key"
FROM "finding_rekey" k WHERE q."feed" = k."feed" AND q."quarantine_key" = k."old_key";--> statement-breakpoint
UPDATE "intake_sync"."audit_entries" a SET "subject" = k."new_key"
FROM "finding_rekey" k WHERE a."feed" = k."feed" AND a."subject" = k."old_key";--> statement-breakpoint
UPDATE "intake_sync"."audit_entries" a SET "detail" = a."detail" - 'sha256'
WHERE a."action" = 'event.skip' AND a."detail" ? 'sha256';

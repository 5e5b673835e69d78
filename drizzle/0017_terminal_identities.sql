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
--> statement-breakpoint
-- TEMPORARY until sql/api lands on main: these bodies move to sql/api files (see the branch report)
-- Records one action and returns its id: what _audit() does, for the functions that need the row's id
-- (request_reveal). on_behalf_of, or the transaction's `intake_sync.actor` setting when it is null, is
-- the caller's own word (self-asserted: nothing checks it): 1-128 of A-Z a-z 0-9 . _ @ : + -, so it
-- cannot carry a newline or a terminal escape into `audit list`. Refused otherwise (22023), naming it.
CREATE OR REPLACE FUNCTION "intake_sync"."_audit_entry"(action text, feed text, subject text, detail jsonb DEFAULT '{}'::jsonb, on_behalf_of text DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  attributed text := COALESCE(NULLIF(on_behalf_of, ''), NULLIF(pg_catalog.current_setting('intake_sync.actor', true), ''));
  entry_id bigint;
BEGIN
  IF action IS NULL OR action !~ '^[a-z][a-z_.]{0,63}$' THEN
    RAISE EXCEPTION 'action: must be 1-64 of a-z _ . starting with a letter' USING ERRCODE = '22023', COLUMN = 'action';
  END IF;
  IF attributed IS NOT NULL AND attributed !~ '^[A-Za-z0-9._@:+-]{1,128}$' THEN
    RAISE EXCEPTION 'on_behalf_of (or the setting intake_sync.actor): must be 1-128 of A-Z a-z 0-9 . _ @ : + -'
      USING ERRCODE = '22023', COLUMN = 'on_behalf_of';
  END IF;
  IF detail IS NOT NULL AND pg_catalog.jsonb_typeof(detail) <> 'object' THEN
    RAISE EXCEPTION 'detail: must be a json object' USING ERRCODE = '22023', COLUMN = 'detail';
  END IF;
  IF pg_catalog.octet_length(COALESCE(detail, '{}'::jsonb)::text) > 8192 THEN
    RAISE EXCEPTION 'detail: must be at most 8192 bytes of json' USING ERRCODE = '22023', COLUMN = 'detail';
  END IF;
  INSERT INTO "intake_sync"."audit_entries" ("actor", "on_behalf_of", "client_addr", "action", "feed", "subject", "detail")
  VALUES (session_user, attributed, pg_catalog.inet_client_addr(), action, pg_catalog.left(feed, 64),
          pg_catalog.left(subject, 512), COALESCE(detail, '{}'::jsonb))
  RETURNING "id" INTO entry_id;
  RETURN entry_id;
END;
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_audit_entry"(text, text, text, jsonb, text) FROM PUBLIC;
--> statement-breakpoint
-- Records one action. Called by the SQL API's functions and by every CLI command that changes
-- state, inside their transaction, so the row commits or rolls back with the action.
-- on_behalf_of: the caller's own attribution (the CLI passes os user@host); when null, the
-- transaction's `intake_sync.actor` setting (SET LOCAL intake_sync.actor = '...') is used, which
-- lets an application name its end user without a new argument on every function. Both are checked
-- by _audit_entry (a safe character set) and are self-asserted.
-- quarantine.reveal_requested is reserved to request_reveal(), which records the transaction it
-- commits in: nobody else (the runtime role included) can write one that show_quarantined() accepts.
CREATE OR REPLACE FUNCTION "intake_sync"."_audit"(action text, feed text, subject text, detail jsonb DEFAULT '{}'::jsonb, on_behalf_of text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF action = 'quarantine.reveal_requested' THEN
    RAISE EXCEPTION 'action: quarantine.reveal_requested is written only by request_reveal()' USING ERRCODE = '42501', COLUMN = 'action';
  END IF;
  PERFORM "intake_sync"."_audit_entry"(action, feed, subject, detail, on_behalf_of);
END;
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_audit"(text, text, text, jsonb, text) FROM PUBLIC;
--> statement-breakpoint
-- The youngest audit rows _purge_audit may ever delete are older than this, whatever its caller says:
-- the owner's RETAIN_AUDIT, which `intake-sync migrate` (or `run` with MIGRATE_ON_START) records in
-- owner_settings from the owner's environment, never under one day; 6 years (the documented default)
-- until it has; null for `forever` (nothing is ever deleted). Only the owner writes owner_settings, so
-- the daemon's role cannot lower it (docs/security.md, "Audit trail").
CREATE OR REPLACE FUNCTION "intake_sync"."_audit_retention_floor"() RETURNS interval
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  configured text;
BEGIN
  SELECT o."value" INTO configured FROM "intake_sync"."owner_settings" o WHERE o."name" = 'retain_audit_ms';
  IF configured IS NULL THEN
    RETURN interval '6 years';
  END IF;
  IF configured = 'forever' THEN
    RETURN NULL;
  END IF;
  IF configured !~ '^[0-9]{1,15}$' THEN
    RAISE EXCEPTION 'owner_settings.retain_audit_ms: must be a whole number of milliseconds or forever (run intake-sync migrate as the owner)'
      USING ERRCODE = '22023';
  END IF;
  RETURN GREATEST(interval '1 day', configured::bigint * interval '1 millisecond');
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_audit_retention_floor"() FROM PUBLIC;
--> statement-breakpoint
-- Deletes at most max_rows audit rows of one feed (null: the rows no feed owns) older than `before`,
-- and never one younger than _audit_retention_floor() (the owner's RETAIN_AUDIT): a caller asking for
-- a later `before` gets the floor. The only way any role but the owner removes audit rows; each call
-- that deleted rows writes `audit.purge` (class, the cutoff applied, the count). dry_run: counts instead.
-- `forever` (a null floor): deletes nothing.
CREATE OR REPLACE FUNCTION "intake_sync"."_purge_audit"(feed text, "before" timestamptz, max_rows integer, dry_run boolean DEFAULT false) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
  given_feed text := feed;
  floor_age interval;
  effective timestamptz;
  done bigint := 0;
BEGIN
  IF given_feed IS NOT NULL AND given_feed !~ '^[a-z0-9_-]{1,64}$' THEN
    RAISE EXCEPTION 'feed: must be 1-64 of a-z 0-9 _ -' USING ERRCODE = '22023', COLUMN = 'feed';
  END IF;
  IF "before" IS NULL THEN
    RAISE EXCEPTION 'before: required' USING ERRCODE = '23502', COLUMN = 'before';
  END IF;
  IF max_rows IS NULL OR max_rows < 1 OR max_rows > 100000 THEN
    RAISE EXCEPTION 'max_rows: must be between 1 and 100000' USING ERRCODE = '22023', COLUMN = 'max_rows';
  END IF;
  floor_age := "intake_sync"."_audit_retention_floor"();
  IF floor_age IS NULL THEN
    RETURN 0;
  END IF;
  effective := LEAST("before", pg_catalog.now() - floor_age);
  IF dry_run THEN
    SELECT pg_catalog.count(*) INTO done FROM "intake_sync"."audit_entries" a
    WHERE a.feed IS NOT DISTINCT FROM given_feed AND a."at" < effective;
    RETURN done;
  END IF;
  WITH picked AS (
    SELECT a.id FROM "intake_sync"."audit_entries" a
    WHERE a.feed IS NOT DISTINCT FROM given_feed AND a."at" < effective
    ORDER BY a."at" LIMIT max_rows FOR UPDATE SKIP LOCKED
  ),
  gone AS (DELETE FROM "intake_sync"."audit_entries" a USING picked WHERE a.id = picked.id RETURNING 1)
  SELECT pg_catalog.count(*) INTO done FROM gone;
  IF done > 0 THEN
    PERFORM "intake_sync"."_audit_entry"('audit.purge', given_feed, NULL,
      pg_catalog.jsonb_build_object('class', 'audit', 'cutoff', effective, 'count', done, 'requested_before', "before"));
  END IF;
  RETURN done;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_purge_audit"(text, timestamptz, integer, boolean) FROM PUBLIC;
--> statement-breakpoint
-- RETAIN_TERMINAL_IDENTITIES: at most max_rows prescriptions of one feed that ended (terminal_at, set by
-- the trigger prescription_terminal_at) before cutoff and still hold an identity lose it: the patient and
-- prescription fields, erx_message_id and identity_key become null; external_id, status and the rest
-- stay. Walks prescriptions_identity_due_idx (feed, terminal_at; partial: only rows still holding an
-- identity), oldest first, skipping locked rows. A prescription in an unfinished `subscriptions migrate`
-- keeps its identity until that ends. Returns how many it changed; dry_run: how many are due.
CREATE OR REPLACE FUNCTION "intake_sync"."_purge_identities"(feed text, cutoff timestamptz, max_rows integer, dry_run boolean DEFAULT false)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
  given_feed text := feed;
  done integer := 0;
BEGIN
  -- the same checks as every class (feed, cutoff, max_rows)
  PERFORM "intake_sync"."_purge_check"('events', feed, cutoff, max_rows);
  IF dry_run THEN
    SELECT pg_catalog.count(*)::integer INTO done FROM "intake_sync"."prescriptions" p
    WHERE p.feed = given_feed AND p.terminal_at IS NOT NULL AND p.identity_key IS NOT NULL AND p.terminal_at < cutoff
      AND NOT EXISTS (SELECT 1 FROM "intake_sync"."subscription_migrations" m
                      WHERE m.feed = p.feed AND m.external_id = p.external_id AND m.state NOT IN ('done', 'released', 'not_sent'));
    RETURN done;
  END IF;
  WITH picked AS (
    SELECT p.id FROM "intake_sync"."prescriptions" p
    WHERE p.feed = given_feed AND p.terminal_at IS NOT NULL AND p.identity_key IS NOT NULL AND p.terminal_at < cutoff
      AND NOT EXISTS (SELECT 1 FROM "intake_sync"."subscription_migrations" m
                      WHERE m.feed = p.feed AND m.external_id = p.external_id AND m.state NOT IN ('done', 'released', 'not_sent'))
    ORDER BY p.terminal_at LIMIT max_rows FOR UPDATE SKIP LOCKED
  ),
  stripped AS (
    UPDATE "intake_sync"."prescriptions" p
    SET patient_first_name = NULL, patient_last_name = NULL, patient_state = NULL, patient_dob = NULL,
      prescriber_npi = NULL, written_date = NULL, drug_ndc = NULL, erx_message_id = NULL, identity_key = NULL
    FROM picked WHERE p.id = picked.id RETURNING 1
  )
  SELECT pg_catalog.count(*)::integer INTO done FROM stripped;
  RETURN done;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_purge_identities"(text, timestamptz, integer, boolean) FROM PUBLIC;
--> statement-breakpoint
-- When a prescription ended: the first time its status reaches delivered or rejected (rank 4 and up)
-- or its cancellation is requested, terminal_at is stamped, once. RETAIN_TERMINAL_IDENTITIES counts
-- from it (_purge_identities). The WHEN clause keeps every other update free of the call, and the
-- column changes once per prescription, so ordinary status updates stay HOT.
CREATE OR REPLACE FUNCTION "intake_sync"."_stamp_terminal_at"() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  NEW.terminal_at := pg_catalog.now();
  RETURN NEW;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_stamp_terminal_at"() FROM PUBLIC;
--> statement-breakpoint
CREATE OR REPLACE TRIGGER "prescriptions_terminal_at"
BEFORE INSERT OR UPDATE OF "status_rank", "cancellation_requested_at" ON "intake_sync"."prescriptions"
FOR EACH ROW
WHEN (NEW."terminal_at" IS NULL AND (NEW."status_rank" >= 4 OR NEW."cancellation_requested_at" IS NOT NULL))
EXECUTE FUNCTION "intake_sync"."_stamp_terminal_at"();
--> statement-breakpoint
-- Step one of reading a finding's identity (PHI): records the request as the audit row
-- `quarantine.reveal_requested` (actor: session_user and on_behalf_of; subject: the finding) with the id
-- of the transaction that writes it, and returns the row's id. The caller COMMITS it; only then does
-- show_quarantined() return the identity, for 5 minutes, to the same session_user. So every read of
-- an identity is on record even when the transaction that reads it rolls back.
-- Refuses, writing nothing: a missing or malformed argument (23502/22023), an unknown finding (P0002),
-- a feed the caller may not use (42501).
CREATE OR REPLACE FUNCTION "intake_sync"."request_reveal"(feed text, event_id text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  key text := "intake_sync"."_require_identifier"('event_id', request_reveal.event_id);
BEGIN
  PERFORM "intake_sync"."_require_feed"(request_reveal.feed);
  PERFORM 1 FROM "intake_sync"."quarantine" q WHERE q.feed = request_reveal.feed AND q.quarantine_key = key;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'event_id: no quarantine finding with this id in feed %', request_reveal.feed
      USING ERRCODE = 'P0002', COLUMN = 'event_id';
  END IF;
  -- the top-level transaction (a savepoint's too): show_quarantined asks whether it committed
  RETURN "intake_sync"."_audit_entry"('quarantine.reveal_requested', request_reveal.feed, key,
    pg_catalog.jsonb_build_object('xact', pg_catalog.pg_current_xact_id()::text));
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."request_reveal"(text, text) FROM PUBLIC;
--> statement-breakpoint
COMMENT ON FUNCTION "intake_sync"."request_reveal"(text, text) IS 'records a request to read one quarantine finding''s identity (audit: quarantine.reveal_requested); commit it, then call show_quarantined within 5 minutes (docs/sql-api/triage.md)';
--> statement-breakpoint
-- One finding with the identity the operator sent, for the triage staff who decide which
-- prescription it is. Step two: it returns the identity only when a reveal request for this finding
-- by the same session_user (request_reveal) COMMITTED within the last 5 minutes; one written in the
-- caller's own open transaction does not count (its transaction is still in progress). Otherwise it
-- refuses with 42501, writing nothing. Each read also writes quarantine.show in the caller's
-- transaction. Closed findings too (the finding may just have been resolved); refuses an unknown one (P0002).
CREATE OR REPLACE FUNCTION "intake_sync"."show_quarantined"(feed text, event_id text)
RETURNS TABLE (finding_feed text, finding_event_id text, reason text, detail text, event_name text, occurred_at timestamptz,
  subscription_id text, held_since timestamptz, resolved_at timestamptz, resolution text, resolution_note text,
  prescription_identity jsonb)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  key text := "intake_sync"."_require_identifier"('event_id', show_quarantined.event_id);
BEGIN
  PERFORM "intake_sync"."_require_feed"(show_quarantined.feed);
  -- the request's row is written only by request_reveal (_audit refuses the action), with its transaction id
  PERFORM 1 FROM "intake_sync"."audit_entries" a
  WHERE a."action" = 'quarantine.reveal_requested' AND a."at" > pg_catalog.now() - interval '5 minutes'
    AND a.feed = show_quarantined.feed AND a.subject = key AND a.actor = session_user
    AND a.detail ->> 'xact' ~ '^[0-9]{1,20}$'
    AND pg_catalog.pg_xact_status((a.detail ->> 'xact')::xid8) = 'committed';
  IF NOT FOUND THEN
    RAISE EXCEPTION 'show_quarantined: no committed reveal request for this finding by this role in the last 5 minutes: call request_reveal(feed, event_id) and commit first'
      USING ERRCODE = '42501',
      HINT = 'request_reveal records the read durably; a request in this same transaction does not count';
  END IF;
  RETURN QUERY
    SELECT q.feed, q.event_id, q.reason, q.detail, e.name, e.occurred_at, e.subscription_id, q.first_seen_at,
      q.resolved_at, q.resolution, q.resolution_note,
      -- the stored event's identity; a malformed body's, when it has an object there
      CASE WHEN e.id IS NOT NULL THEN (e.raw -> 'prescription_identity')::jsonb
        WHEN pg_catalog.jsonb_typeof(q.raw -> 'prescription_identity') = 'object' THEN q.raw -> 'prescription_identity' END
    FROM "intake_sync"."quarantine" q
    LEFT JOIN "intake_sync"."events" e ON e.feed = q.feed AND e.id = q.event_id
    WHERE q.feed = show_quarantined.feed AND q.quarantine_key = key;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'event_id: no quarantine finding with this id in feed %', show_quarantined.feed
      USING ERRCODE = 'P0002', COLUMN = 'event_id';
  END IF;
  PERFORM "intake_sync"."_audit"('quarantine.show', show_quarantined.feed, key, '{}'::jsonb);
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."show_quarantined"(text, text) FROM PUBLIC;
--> statement-breakpoint
COMMENT ON FUNCTION "intake_sync"."show_quarantined"(text, text) IS 'one quarantine finding with its prescription identity (PHI), only after a committed request_reveal (audited as quarantine.reveal_requested, then quarantine.show) (docs/sql-api/triage.md)';

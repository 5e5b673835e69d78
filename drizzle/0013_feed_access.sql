-- Per-feed access for application roles (issue 18, part 4) and the audit rows of the SQL API's
-- writes (part 3). Which feeds a role may use is recorded by `intake-sync grants --role app --to ROLE
-- --feed F` (statements the owner runs); the gate of 0010 (_require_feed -> _feed_access_check) and
-- the views' filter (_feed_visible, _visible_feeds) read it.
--
-- The calling role: the role the session SET ROLE to, else session_user (the role that logged in).
-- Not current_user: inside the SQL API's SECURITY DEFINER functions that is the owner. Not a
-- vendor's own SECURITY DEFINER wrapper's owner either: a wrapper cannot widen what its caller may use.
-- A role may use the feeds recorded for itself and for every role whose privileges it has
-- (pg_has_role USAGE: an application logging in as a member of a granted role). A role with no
-- record (directly or through membership) is unrestricted: the app roles granted before this
-- version, the runtime role, and the owner (and superusers), which is unrestricted in any case.
CREATE TABLE "intake_sync"."feed_access" (
  "role" regrole NOT NULL,
  "feed" text NOT NULL,
  "granted_at" timestamptz NOT NULL DEFAULT pg_catalog.now(),
  "granted_by" text NOT NULL DEFAULT session_user,
  CONSTRAINT "feed_access_pk" PRIMARY KEY ("role", "feed"),
  CONSTRAINT "feed_access_feed_check" CHECK ("feed" ~ '^[a-z0-9_-]{1,64}$')
);
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."feed_access" FROM PUBLIC;
--> statement-breakpoint
-- Who is calling, as the docs define it (see the head of this file).
CREATE FUNCTION "intake_sync"."_calling_role"() RETURNS name
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN pg_catalog.current_setting('role') = 'none' THEN session_user
    ELSE pg_catalog.current_setting('role')::name END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_calling_role"() FROM PUBLIC;
--> statement-breakpoint
-- The feeds the calling role may use; null: every feed (owner, superuser, or a role with no record).
-- SECURITY DEFINER: it reads feed_access, which only the owner may read. Executable by every role:
-- a view calls it with its reader's rights, and it answers only about the caller.
CREATE FUNCTION "intake_sync"."_visible_feeds"() RETURNS text[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  caller name := "intake_sync"."_calling_role"();
  owner_oid oid;
  feeds text[];
  restricted boolean;
BEGIN
  SELECT n.nspowner INTO owner_oid FROM pg_catalog.pg_namespace n WHERE n.nspname = 'intake_sync';
  IF pg_catalog.pg_has_role(caller, owner_oid, 'USAGE') THEN
    RETURN NULL;
  END IF;
  SELECT pg_catalog.bool_or(true), pg_catalog.array_agg(DISTINCT a.feed ORDER BY a.feed)
  INTO restricted, feeds
  FROM "intake_sync"."feed_access" a
  WHERE pg_catalog.pg_has_role(caller, a.role::oid, 'USAGE');
  IF restricted IS NULL THEN
    RETURN NULL;
  END IF;
  RETURN feeds;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_visible_feeds"() FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION "intake_sync"."_visible_feeds"() TO PUBLIC;
--> statement-breakpoint
-- 0010's row filter, now real. Per row it costs a function call (a few microseconds): a view over
-- many rows filters with the two InitPlans the views below use instead (evaluated once per query).
CREATE OR REPLACE FUNCTION "intake_sync"."_feed_visible"(feed text) RETURNS boolean
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT v IS NULL OR _feed_visible.feed = ANY (v) FROM (SELECT "intake_sync"."_visible_feeds"() AS v) s
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_feed_visible"(text) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION "intake_sync"."_feed_visible"(text) TO PUBLIC;
--> statement-breakpoint
-- 0010's gate, now real: a call for a feed the calling role may not use is refused (42501), naming
-- the feed and the role, and writes nothing.
CREATE OR REPLACE FUNCTION "intake_sync"."_feed_access_check"(feed text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  allowed text[] := "intake_sync"."_visible_feeds"();
BEGIN
  IF allowed IS NOT NULL AND NOT (_feed_access_check.feed = ANY (allowed)) THEN
    RAISE EXCEPTION 'feed: role % may not use feed "%"', pg_catalog.quote_ident("intake_sync"."_calling_role"()), _feed_access_check.feed
      USING ERRCODE = '42501', COLUMN = 'feed',
        HINT = 'the owner records the feeds an application role may use: intake-sync grants --role app --to ROLE --feed FEED (docs/security.md)';
  END IF;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_feed_access_check"(text) FROM PUBLIC;
--> statement-breakpoint
-- The views show the calling role's feeds only. Same columns, same order (CREATE OR REPLACE keeps
-- their grants); the filter's InitPlans run once per query, not once per row.
CREATE OR REPLACE VIEW "intake_sync"."prescription_status" AS
SELECT p.external_id, p.status, p.status_occurred_at, p.cancellation_requested_at,
  (SELECT count(*) FROM "intake_sync"."events" e WHERE e.prescription_id = p.id)::integer AS events,
  p.updated_at, p.subscription_id, p.feed
FROM "intake_sync"."prescriptions" p
WHERE (SELECT "intake_sync"."_visible_feeds"()) IS NULL
  OR p.feed = ANY (((SELECT "intake_sync"."_visible_feeds"()))::text[]);
--> statement-breakpoint
CREATE OR REPLACE VIEW "intake_sync"."outbox_status" AS
SELECT o."id", o."external_id", o."kind", o."state", o."attempts", o."last_error", o."response_status", o."in_doubt",
       o."next_attempt_at", o."created_at", o."updated_at", o."last_attempt_at", o."completed_at", o."feed"
FROM "intake_sync"."outbox" o
WHERE (SELECT "intake_sync"."_visible_feeds"()) IS NULL
  OR o."feed" = ANY (((SELECT "intake_sync"."_visible_feeds"()))::text[]);
--> statement-breakpoint
-- 0006's register_prescription, audited: one `prescription.register` row in the call's transaction,
-- saying whether the row was new and whether its identity changed (never the identity itself).
CREATE OR REPLACE FUNCTION "intake_sync"."register_prescription"(external_id text, identity jsonb, feed text DEFAULT 'default')
RETURNS "intake_sync"."prescription_registration"
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  problems text[] := '{}';
  stored_id text;
  new_key text;
  new_erx text;
  old_key text;
  old_erx text;
  result "intake_sync"."prescription_registration";
BEGIN
  IF register_prescription.external_id IS NULL THEN
    problems := problems || 'external_id: required'::text;
  ELSIF "intake_sync"."_js_trim"(register_prescription.external_id) = '' THEN
    problems := problems || 'external_id: must not be empty'::text;
  END IF;
  PERFORM "intake_sync"."_raise_invalid"(problems || "intake_sync"."_identity_problems"(register_prescription.identity, true));
  PERFORM "intake_sync"."_require_feed"(register_prescription.feed);
  PERFORM "intake_sync"."_require_read_committed"('register_prescription');
  -- exclusive against page applies: a page must not match against a half-registered set
  PERFORM pg_catalog.pg_advisory_xact_lock(7306, pg_catalog.hashtext('intake_sync'));

  stored_id := "intake_sync"."_js_trim"(register_prescription.external_id);
  new_key := "intake_sync"."_identity_key"(register_prescription.identity);
  new_erx := "intake_sync"."_normalise_erx"(register_prescription.identity ->> 'erx_message_id');
  SELECT p.identity_key, p.erx_message_id INTO old_key, old_erx
  FROM "intake_sync"."prescriptions" p WHERE p.feed = register_prescription.feed AND p.external_id = stored_id;

  INSERT INTO "intake_sync"."prescriptions" AS p (feed, external_id, patient_first_name, patient_last_name, patient_state,
    patient_dob, prescriber_npi, written_date, drug_ndc, erx_message_id, identity_key)
  VALUES (register_prescription.feed, stored_id,
    "intake_sync"."_js_trim"(register_prescription.identity ->> 'patient_first_name'),
    "intake_sync"."_js_trim"(register_prescription.identity ->> 'patient_last_name'),
    "intake_sync"."_js_trim"(register_prescription.identity ->> 'patient_state'),
    "intake_sync"."_js_trim"(register_prescription.identity ->> 'patient_dob'),
    register_prescription.identity ->> 'prescriber_npi',
    "intake_sync"."_js_trim"(register_prescription.identity ->> 'written_date'),
    "intake_sync"."_js_trim"(register_prescription.identity ->> 'drug_ndc'),
    new_erx, new_key)
  ON CONFLICT (feed, external_id) DO UPDATE SET
    patient_first_name = excluded.patient_first_name, patient_last_name = excluded.patient_last_name,
    patient_state = excluded.patient_state, patient_dob = excluded.patient_dob,
    prescriber_npi = excluded.prescriber_npi, written_date = excluded.written_date, drug_ndc = excluded.drug_ndc,
    erx_message_id = excluded.erx_message_id, identity_key = excluded.identity_key,
    updated_at = pg_catalog.now()
  RETURNING (p.xmax = 0) INTO result.inserted;

  -- the events its new identity may now match, and those its old identity may no longer make ambiguous
  SELECT r.matched INTO result.rematched
  FROM "intake_sync"."rematch_held"(
    pg_catalog.array_remove(ARRAY[new_key, old_key], NULL),
    pg_catalog.array_remove(ARRAY[new_erx, old_erx], NULL),
    register_prescription.feed) r;
  SELECT p.status INTO result.status FROM "intake_sync"."prescriptions" p
  WHERE p.feed = register_prescription.feed AND p.external_id = stored_id;
  result.external_id := stored_id;
  PERFORM "intake_sync"."_audit"('prescription.register', register_prescription.feed, stored_id,
    pg_catalog.jsonb_build_object('inserted', result.inserted,
      'identity_changed', NOT result.inserted AND (old_key IS DISTINCT FROM new_key OR old_erx IS DISTINCT FROM new_erx),
      'rematched', COALESCE(result.rematched, 0)));
  RETURN result;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."register_prescription"(text, jsonb, text) FROM PUBLIC;
--> statement-breakpoint
-- 0006's send_prescription, audited (`outbox.send`, the outbox row's id).
CREATE OR REPLACE FUNCTION "intake_sync"."send_prescription"(prescription jsonb, feed text DEFAULT 'default')
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  problem text[] := "intake_sync"."_prescription_problem"(send_prescription.prescription);
  external text;
  row_id bigint;
BEGIN
  IF problem IS NOT NULL THEN
    RAISE EXCEPTION '%: %', problem[1], problem[2] USING ERRCODE = problem[3], COLUMN = problem[1];
  END IF;
  PERFORM "intake_sync"."_require_feed"(send_prescription.feed);
  external := "intake_sync"."_js_trim"(send_prescription.prescription ->> 'external_id');
  INSERT INTO "intake_sync"."outbox" ("feed", "external_id", "kind", "body")
  VALUES (send_prescription.feed, external, 'send', send_prescription.prescription)
  ON CONFLICT ("feed", "external_id") WHERE "kind" = 'send' AND "state" IN ('pending', 'delivered') DO NOTHING
  RETURNING "id" INTO row_id;
  IF row_id IS NULL THEN
    RAISE EXCEPTION 'prescription.external_id: already in the outbox (pending or delivered)'
      USING ERRCODE = '23505', COLUMN = 'prescription.external_id';
  END IF;
  PERFORM "intake_sync"."_audit"('outbox.send', send_prescription.feed, external, pg_catalog.jsonb_build_object('outbox_id', row_id));
  RETURN row_id;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."send_prescription"(jsonb, text) FROM PUBLIC;
--> statement-breakpoint
-- 0006's cancel_prescription, audited (`outbox.cancel`, the outbox row's id).
CREATE OR REPLACE FUNCTION "intake_sync"."cancel_prescription"(external_id text, feed text DEFAULT 'default')
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  external text := "intake_sync"."_js_trim"(cancel_prescription.external_id);
  row_id bigint;
BEGIN
  IF external IS NULL THEN
    RAISE EXCEPTION 'external_id: is required' USING ERRCODE = '23502', COLUMN = 'external_id';
  END IF;
  IF external = '' THEN
    RAISE EXCEPTION 'external_id: must not be empty' USING ERRCODE = '22023', COLUMN = 'external_id';
  END IF;
  PERFORM "intake_sync"."_require_feed"(cancel_prescription.feed);
  INSERT INTO "intake_sync"."outbox" ("feed", "external_id", "kind") VALUES (cancel_prescription.feed, external, 'cancel')
  RETURNING "id" INTO row_id;
  PERFORM "intake_sync"."_audit"('outbox.cancel', cancel_prescription.feed, external, pg_catalog.jsonb_build_object('outbox_id', row_id));
  RETURN row_id;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."cancel_prescription"(text, text) FROM PUBLIC;

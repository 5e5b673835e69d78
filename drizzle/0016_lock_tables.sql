-- Issue 25 item 2: no login without a grant can stall a feed. The match lock, the source lock, the
-- feed leases and the replicas' membership were advisory locks with predictable keys, and any login
-- may take any advisory lock (pg_locks shows every key held, so a secret key would leak once used).
-- They are now rows of tables only the runtime role (and the owner) may write, and a row lock needs
-- UPDATE privilege: a role without it cannot take, hold or queue for one.
--
-- feed_locks: one row per (feed, lock). A page apply takes its feed's 'match' row FOR SHARE, a
-- registration or rematch FOR UPDATE (through _feed_lock, sql/api); outbox claims take 'source' FOR
-- SHARE, the start of an API version migration FOR UPDATE. Held only for the transaction, like the
-- advisory locks they replace (a row lock never outlives its transaction, so vacuum is not held back
-- beyond what the transaction itself holds). The row ('', 'claim') serialises the claims of the
-- feeds of a schema (src/db/feed-registry.ts) by a run or the demo.
CREATE TABLE "intake_sync"."feed_locks" (
  "feed" text NOT NULL,
  "lock" text NOT NULL,
  CONSTRAINT "feed_locks_pkey" PRIMARY KEY ("feed", "lock"),
  CONSTRAINT "feed_locks_lock_check" CHECK ("lock" IN ('match', 'source', 'claim'))
);
--> statement-breakpoint
INSERT INTO "intake_sync"."feed_locks" ("feed", "lock")
SELECT c."feed", l."lock" FROM "intake_sync"."feed_checkpoints" c CROSS JOIN (VALUES ('match'), ('source')) AS l("lock")
ON CONFLICT DO NOTHING;
--> statement-breakpoint
-- feed_leases: who leads each feed (src/sync/leadership/lease-session.ts). A lease is free when it
-- expired (no heartbeat within the TTL) or when its holder's backend (holder_pid) is gone, so a
-- killed holder's feeds are taken over at once, as with the session lock before. Every statement on
-- it is a single autocommit statement: no transaction stays open for a lease's lifetime.
CREATE TABLE "intake_sync"."feed_leases" (
  "feed" text PRIMARY KEY NOT NULL,
  -- the lease session's random id (one per process's lock session)
  "holder" text NOT NULL,
  -- pg_backend_pid() of the holder's lock session: the lease dies with that session
  "holder_pid" integer NOT NULL,
  "acquired_at" timestamptz NOT NULL,
  "heartbeat_at" timestamptz NOT NULL,
  "expires_at" timestamptz NOT NULL
);
--> statement-breakpoint
-- lease_members: the live replicas of a deployment (was: holders of a shared advisory lock), for
-- the fair share of the feeds. A member counts while its backend lives and its heartbeat is recent.
CREATE TABLE "intake_sync"."lease_members" (
  "member" text PRIMARY KEY NOT NULL,
  "backend_pid" integer NOT NULL,
  "expires_at" timestamptz NOT NULL
);
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."feed_locks", "intake_sync"."feed_leases", "intake_sync"."lease_members" FROM PUBLIC;
--> statement-breakpoint
-- Takes a feed's lock row until the transaction ends: FOR UPDATE (exclusive) or FOR SHARE. The row is
-- created on first use. A null feed (exclusive only) takes the lock of every feed, in feed order, as
-- the rematch of every feed does. Runs as the owner: the runtime role's statements call it, and the
-- SQL API's SECURITY DEFINER functions call it for app roles, which cannot call it themselves (an app
-- role could otherwise hold another feed's lock). Waits at most lock_timeout, then 55P03.
CREATE OR REPLACE FUNCTION "intake_sync"."_feed_lock"(feed text, lock text, exclusive boolean) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF _feed_lock.lock IS NULL OR _feed_lock.exclusive IS NULL OR (_feed_lock.feed IS NULL AND NOT _feed_lock.exclusive) THEN
    RAISE EXCEPTION '_feed_lock: lock and exclusive are required, and a null feed (every feed) only exclusively'
      USING ERRCODE = '22004';
  END IF;
  IF _feed_lock.feed IS NULL THEN
    PERFORM 1 FROM "intake_sync"."feed_locks" l WHERE l."lock" = _feed_lock.lock ORDER BY l."feed" FOR UPDATE;
    RETURN;
  END IF;
  FOR attempt IN 1..2 LOOP
    IF _feed_lock.exclusive THEN
      PERFORM 1 FROM "intake_sync"."feed_locks" l WHERE l."feed" = _feed_lock.feed AND l."lock" = _feed_lock.lock FOR UPDATE;
    ELSE
      PERFORM 1 FROM "intake_sync"."feed_locks" l WHERE l."feed" = _feed_lock.feed AND l."lock" = _feed_lock.lock FOR SHARE;
    END IF;
    IF FOUND THEN
      RETURN;
    END IF;
    -- first use of this feed's lock: a concurrent first use waits here for the other's commit
    INSERT INTO "intake_sync"."feed_locks" ("feed", "lock") VALUES (_feed_lock.feed, _feed_lock.lock) ON CONFLICT DO NOTHING;
  END LOOP;
  RAISE EXCEPTION '_feed_lock: the % lock row of feed "%" could not be taken', _feed_lock.lock, _feed_lock.feed USING ERRCODE = '55000';
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_feed_lock"(text, text, boolean) FROM PUBLIC;
--> statement-breakpoint
-- Issue 25 item 3: the SQL API's input is bounded. The caps are src/intake/limits.ts's
-- (MAX_API_BODY_BYTES, MAX_FREE_TEXT_LENGTH for FREE_TEXT_KEYS, MAX_IDENTITY_FIELD_LENGTH for every
-- other string), checked equal by test/sql-api/outbox/input-caps.parity.test.ts. Returns the first
-- cap broken as (field, message, SQLSTATE 22001), or null: the body's size first, so nothing larger
-- than the cap is ever walked, then each string in path order (the path names the field, never its value).
CREATE OR REPLACE FUNCTION "intake_sync"."_api_input_caps"() RETURNS jsonb
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT '{"body_bytes": 65536, "free_text": 2048, "other_text": 256, "free_text_keys": ["note", "sig_text", "text"]}'::jsonb
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_api_input_caps"() FROM PUBLIC;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "intake_sync"."_api_input_problem"(value jsonb, root text) RETURNS text[]
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  caps jsonb := "intake_sync"."_api_input_caps"();
  bytes integer;
  hit record;
BEGIN
  IF _api_input_problem.value IS NULL THEN
    RETURN NULL;
  END IF;
  bytes := octet_length(_api_input_problem.value::text);
  IF bytes > (caps ->> 'body_bytes')::integer THEN
    RETURN ARRAY[_api_input_problem.root, format('must be at most %s bytes of JSON (got %s)', caps ->> 'body_bytes', bytes), '22001'];
  END IF;
  WITH RECURSIVE walk(path, key, item) AS (
    SELECT _api_input_problem.root, _api_input_problem.root, _api_input_problem.value
    UNION ALL
    SELECT w.path || e.step, e.key, e.item
    FROM walk w
    CROSS JOIN LATERAL (
      SELECT '.' || o.key AS step, o.key, o.value AS item
      FROM jsonb_each(CASE WHEN jsonb_typeof(w.item) = 'object' THEN w.item END) AS o
      UNION ALL
      SELECT '[' || (a.ord - 1) || ']', w.key, a.value
      FROM jsonb_array_elements(CASE WHEN jsonb_typeof(w.item) = 'array' THEN w.item END) WITH ORDINALITY AS a(value, ord)
    ) e
  ),
  measured AS (
    SELECT path, length(item #>> '{}') AS chars,
      CASE WHEN caps -> 'free_text_keys' ? key THEN (caps ->> 'free_text')::integer ELSE (caps ->> 'other_text')::integer END AS cap
    FROM walk WHERE jsonb_typeof(item) = 'string'
  )
  SELECT path, chars, cap INTO hit FROM measured WHERE chars > cap ORDER BY path COLLATE "C" LIMIT 1;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  RETURN ARRAY[hit.path, format('must be at most %s characters (got %s)', hit.cap, hit.chars), '22001'];
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_api_input_problem"(jsonb, text) FROM PUBLIC;
--> statement-breakpoint
-- Raises _api_input_problem's finding (22001, the field as the error's column), if any.
CREATE OR REPLACE FUNCTION "intake_sync"."_raise_input_problem"(problem text[]) RETURNS void
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF _raise_input_problem.problem IS NOT NULL THEN
    RAISE EXCEPTION '%: %', problem[1], problem[2] USING ERRCODE = problem[3], COLUMN = problem[1];
  END IF;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_raise_input_problem"(text[]) FROM PUBLIC;
--> statement-breakpoint
-- register_prescription: as in 0013_feed_access.sql, taking its feed's match lock row instead of the advisory lock
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
  -- bounded input first (issue 25): nothing over a cap is parsed further
  PERFORM "intake_sync"."_raise_input_problem"(coalesce(
    "intake_sync"."_api_input_problem"(pg_catalog.to_jsonb(register_prescription.external_id), 'external_id'),
    "intake_sync"."_api_input_problem"(register_prescription.identity, 'identity')));
  IF register_prescription.external_id IS NULL THEN
    problems := problems || 'external_id: required'::text;
  ELSIF "intake_sync"."_js_trim"(register_prescription.external_id) = '' THEN
    problems := problems || 'external_id: must not be empty'::text;
  END IF;
  PERFORM "intake_sync"."_raise_invalid"(problems || "intake_sync"."_identity_problems"(register_prescription.identity, true));
  PERFORM "intake_sync"."_require_feed"(register_prescription.feed);
  PERFORM "intake_sync"."_require_read_committed"('register_prescription');
  -- exclusive against page applies: a page must not match against a half-registered set
  PERFORM "intake_sync"."_feed_lock"(register_prescription.feed, 'match', true);

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
-- rematch_held: as in 0014_triage.sql, taking its feed's match lock row instead of the advisory lock
CREATE OR REPLACE FUNCTION "intake_sync"."rematch_held"(identity_keys text[] DEFAULT NULL, erx_message_ids text[] DEFAULT NULL, feed text DEFAULT NULL)
RETURNS TABLE (examined integer, matched integer, still_unmatched integer, still_ambiguous integer)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_custom_plan
AS $$
#variable_conflict use_column
BEGIN
  PERFORM "intake_sync"."_require_read_committed"('rematch_held');
  PERFORM "intake_sync"."_feed_lock"(rematch_held.feed, 'match', true);
  WITH held AS (
    SELECT q.id AS quarantine_id, e.id, e.feed, e.identity_key, e.erx_message_id, e.subscription_id, e.name, e.occurred_at, e.status_rank
    FROM "intake_sync"."quarantine" q
    JOIN "intake_sync"."events" e ON e.feed = q.feed AND e.id = q.event_id
    WHERE q.resolved_at IS NULL AND q.reason IN ('unmatched', 'ambiguous') AND e.prescription_id IS NULL
      AND rematch_held.identity_keys IS NULL AND rematch_held.erx_message_ids IS NULL
      AND (rematch_held.feed IS NULL OR e.feed = rematch_held.feed)
    UNION ALL
    -- a held event's finding is keyed by its feed and id (quarantine_feed_key_key)
    SELECT q.id, e.id, e.feed, e.identity_key, e.erx_message_id, e.subscription_id, e.name, e.occurred_at, e.status_rank
    FROM "intake_sync"."events" e
    JOIN "intake_sync"."quarantine" q ON q.feed = e.feed AND q.quarantine_key = e.id
    WHERE e.prescription_id IS NULL
      AND (e.identity_key = ANY (rematch_held.identity_keys) OR e.erx_message_id = ANY (rematch_held.erx_message_ids))
      AND (rematch_held.feed IS NULL OR e.feed = rematch_held.feed)
      AND q.resolved_at IS NULL AND q.reason IN ('unmatched', 'ambiguous')
  ),
  evaluated AS (
    SELECT held.*, m.prescription_id, m.candidates, m.quarantine_reason, m.quarantine_detail
    FROM held CROSS JOIN LATERAL "intake_sync"."_match_prescription"(held.identity_key, held.erx_message_id, held.feed, held.subscription_id) m
  ),
  linked AS (
    UPDATE "intake_sync"."events" e SET prescription_id = v.prescription_id
    FROM evaluated v WHERE e.feed = v.feed AND e.id = v.id AND v.candidates = 1
  ),
  -- per prescription the highest rank wins; ties go to the later event, then the larger id
  best AS (
    SELECT DISTINCT ON (prescription_id) prescription_id, id, name, occurred_at, status_rank
    FROM evaluated
    WHERE candidates = 1 AND status_rank IS NOT NULL
    ORDER BY prescription_id, status_rank DESC, occurred_at DESC, id DESC
  ),
  advanced AS (
    UPDATE "intake_sync"."prescriptions" p
    SET status = b.name, status_rank = b.status_rank, status_occurred_at = b.occurred_at, status_event_id = b.id,
      updated_at = pg_catalog.now()
    FROM best b
    WHERE p.id = b.prescription_id AND b.status_rank > p.status_rank
  ),
  resolved AS (
    UPDATE "intake_sync"."quarantine" q SET resolved_at = pg_catalog.now(), resolution = 'matched', resolution_note = NULL
    FROM evaluated v WHERE q.id = v.quarantine_id AND v.candidates = 1
  ),
  -- the same reason and wording as a page apply gives; a finding whose verdict did not change is not
  -- rewritten (most of a large quarantine stays unmatched: rewriting it cost a rematch most of its time)
  reclassified AS (
    UPDATE "intake_sync"."quarantine" q SET reason = v.quarantine_reason, detail = v.quarantine_detail
    FROM evaluated v WHERE q.id = v.quarantine_id AND v.candidates <> 1
      AND (q.reason IS DISTINCT FROM v.quarantine_reason OR q.detail IS DISTINCT FROM v.quarantine_detail)
  )
  SELECT pg_catalog.count(*)::integer,
    (pg_catalog.count(*) FILTER (WHERE candidates = 1))::integer,
    (pg_catalog.count(*) FILTER (WHERE candidates = 0))::integer,
    (pg_catalog.count(*) FILTER (WHERE candidates > 1))::integer
  INTO examined, matched, still_unmatched, still_ambiguous
  FROM evaluated;
  RETURN NEXT;
END
$$;
--> statement-breakpoint
-- resolve_quarantined: as in 0014_triage.sql, taking its feed's match lock row instead of the advisory lock
CREATE OR REPLACE FUNCTION "intake_sync"."resolve_quarantined"(feed text, event_id text, external_id text)
RETURNS TABLE (subscription_id text, events_applied integer, status text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  key text := "intake_sync"."_require_identifier"('event_id', resolve_quarantined.event_id);
  external text := "intake_sync"."_require_identifier"('external_id', resolve_quarantined.external_id);
  target_id bigint;
  finding record;
  linked_to bigint;
  linked_external text;
  applied integer;
BEGIN
  PERFORM "intake_sync"."_require_feed"(resolve_quarantined.feed);
  PERFORM "intake_sync"."_require_read_committed"('resolve_quarantined');
  PERFORM "intake_sync"."_feed_lock"(resolve_quarantined.feed, 'match', true);

  SELECT p.id INTO target_id FROM "intake_sync"."prescriptions" p
  WHERE p.feed = resolve_quarantined.feed AND p.external_id = external;
  IF target_id IS NULL THEN
    RAISE EXCEPTION 'external_id: no local prescription with this external_id in feed %', resolve_quarantined.feed
      USING ERRCODE = 'P0002', COLUMN = 'external_id';
  END IF;
  SELECT q.id, q.reason, q.resolution, q.resolved_at, e.id AS stored_event, e.subscription_id AS subscription
  INTO finding
  FROM "intake_sync"."quarantine" q
  LEFT JOIN "intake_sync"."events" e ON e.feed = q.feed AND e.id = q.event_id
  WHERE q.feed = resolve_quarantined.feed AND q.quarantine_key = key
  FOR UPDATE OF q;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'event_id: no quarantine finding with this id in feed %', resolve_quarantined.feed
      USING ERRCODE = 'P0002', COLUMN = 'event_id';
  END IF;
  IF finding.resolved_at IS NOT NULL THEN
    RAISE EXCEPTION 'event_id: the finding is already closed (%)', finding.resolution
      USING ERRCODE = '55000', COLUMN = 'event_id';
  END IF;
  IF finding.reason NOT IN ('unmatched', 'ambiguous') OR finding.stored_event IS NULL THEN
    RAISE EXCEPTION 'event_id: a % finding cannot be applied to a prescription (dismiss it, or see the runbook)', finding.reason
      USING ERRCODE = '55000', COLUMN = 'event_id';
  END IF;

  INSERT INTO "intake_sync"."subscription_links" AS l (feed, subscription_id, prescription_id, event_id)
  VALUES (resolve_quarantined.feed, finding.subscription, target_id, key)
  ON CONFLICT ON CONSTRAINT "subscription_links_pk" DO NOTHING;
  SELECT l.prescription_id, p.external_id INTO linked_to, linked_external
  FROM "intake_sync"."subscription_links" l JOIN "intake_sync"."prescriptions" p ON p.id = l.prescription_id
  WHERE l.feed = resolve_quarantined.feed AND l.subscription_id = finding.subscription;
  IF linked_to <> target_id THEN
    RAISE EXCEPTION 'external_id: the event''s subscription is already linked to external_id %', linked_external
      USING ERRCODE = '55000', COLUMN = 'external_id';
  END IF;

  -- this event and every other held event of its subscription (open unmatched/ambiguous findings)
  WITH held AS (
    SELECT q.id AS quarantine_id, e.id, e.name, e.occurred_at, e.status_rank
    FROM "intake_sync"."events" e
    JOIN "intake_sync"."quarantine" q ON q.feed = e.feed AND q.quarantine_key = e.id
    WHERE e.feed = resolve_quarantined.feed AND e.subscription_id = finding.subscription AND e.prescription_id IS NULL
      AND q.resolved_at IS NULL AND q.reason IN ('unmatched', 'ambiguous')
  ),
  linked AS (
    UPDATE "intake_sync"."events" e SET prescription_id = target_id
    FROM held h WHERE e.feed = resolve_quarantined.feed AND e.id = h.id
  ),
  best AS (
    -- the highest rank wins; ties go to the later event, then the larger id (as in a page apply)
    SELECT id, name, occurred_at, status_rank
    FROM held WHERE status_rank IS NOT NULL
    ORDER BY status_rank DESC, occurred_at DESC, id DESC
    LIMIT 1
  ),
  advanced AS (
    UPDATE "intake_sync"."prescriptions" p
    SET status = b.name, status_rank = b.status_rank, status_occurred_at = b.occurred_at, status_event_id = b.id,
      updated_at = pg_catalog.now()
    FROM best b
    WHERE p.id = target_id AND b.status_rank > p.status_rank
  ),
  closed AS (
    UPDATE "intake_sync"."quarantine" q SET resolved_at = pg_catalog.now(), resolution = 'resolved', resolution_note = external
    FROM held h WHERE q.id = h.quarantine_id
  )
  SELECT pg_catalog.count(*)::integer INTO applied FROM held;

  PERFORM "intake_sync"."_audit"('quarantine.resolve', resolve_quarantined.feed, key,
    pg_catalog.jsonb_build_object('external_id', external, 'subscription_id', finding.subscription, 'events_applied', applied,
      'reason', finding.reason));
  RETURN QUERY SELECT finding.subscription::text, applied, p.status FROM "intake_sync"."prescriptions" p WHERE p.id = target_id;
END
$$;
--> statement-breakpoint
-- dismiss_quarantined: as in 0014_triage.sql, taking its feed's match lock row instead of the advisory lock
CREATE OR REPLACE FUNCTION "intake_sync"."dismiss_quarantined"(feed text, event_id text, reason text)
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  key text := "intake_sync"."_require_identifier"('event_id', dismiss_quarantined.event_id);
  finding record;
BEGIN
  IF dismiss_quarantined.reason IS NULL THEN
    RAISE EXCEPTION 'reason: required' USING ERRCODE = '23502', COLUMN = 'reason';
  END IF;
  IF dismiss_quarantined.reason !~ '^[a-z][a-z0-9_.-]{0,63}$' THEN
    RAISE EXCEPTION 'reason: must be a code of 1-64 a-z 0-9 _ . - starting with a letter (not_ours, operator_test, ...)'
      USING ERRCODE = '22023', COLUMN = 'reason';
  END IF;
  PERFORM "intake_sync"."_require_feed"(dismiss_quarantined.feed);
  PERFORM "intake_sync"."_feed_lock"(dismiss_quarantined.feed, 'match', true);
  SELECT q.id, q.reason, q.resolution, q.resolved_at INTO finding
  FROM "intake_sync"."quarantine" q
  WHERE q.feed = dismiss_quarantined.feed AND q.quarantine_key = key
  FOR UPDATE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'event_id: no quarantine finding with this id in feed %', dismiss_quarantined.feed
      USING ERRCODE = 'P0002', COLUMN = 'event_id';
  END IF;
  IF finding.resolved_at IS NOT NULL THEN
    RAISE EXCEPTION 'event_id: the finding is already closed (%)', finding.resolution
      USING ERRCODE = '55000', COLUMN = 'event_id';
  END IF;
  UPDATE "intake_sync"."quarantine" q
  SET resolved_at = pg_catalog.now(), resolution = 'dismissed', resolution_note = dismiss_quarantined.reason
  WHERE q.id = finding.id;
  PERFORM "intake_sync"."_audit"('quarantine.dismiss', dismiss_quarantined.feed, key,
    pg_catalog.jsonb_build_object('reason', dismiss_quarantined.reason, 'finding_reason', finding.reason));
END
$$;
--> statement-breakpoint
-- send_prescription: as in 0013_feed_access.sql, its body bounded first
CREATE OR REPLACE FUNCTION "intake_sync"."send_prescription"(prescription jsonb, feed text DEFAULT 'default')
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  -- bounded input first (issue 25): a body over the cap is never walked
  problem text[] := coalesce("intake_sync"."_api_input_problem"(send_prescription.prescription, 'prescription'),
    "intake_sync"."_prescription_problem"(send_prescription.prescription));
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
-- cancel_prescription: as in 0013_feed_access.sql, its external_id bounded
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
  PERFORM "intake_sync"."_raise_input_problem"("intake_sync"."_api_input_problem"(pg_catalog.to_jsonb(external), 'external_id'));
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

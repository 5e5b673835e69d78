-- Several feeds (operator accounts) in one deployment (issue 11, part 1). 0005 gave prescriptions,
-- outbox and status_changes a `feed` column ('default' for existing rows); here the match rule
-- and the SQL API learn it. The SQL functions take the feed as an optional LAST argument
-- defaulting to 'default', so every call written for 0.2 (two arguments, one argument) still works.
--
-- An install that ran ONE feed under another name (FEED_NAME) has exactly one checkpoint row
-- naming it: its rows belong to that feed, not to 'default'.
DO $$
DECLARE
  only_feed text;
BEGIN
  IF (SELECT pg_catalog.count(*) FROM "intake_sync"."feed_checkpoints") = 1 THEN
    SELECT c.feed INTO only_feed FROM "intake_sync"."feed_checkpoints" c;
    IF only_feed <> 'default' THEN
      UPDATE "intake_sync"."prescriptions" SET feed = only_feed;
      UPDATE "intake_sync"."outbox" SET feed = only_feed;
      UPDATE "intake_sync"."status_changes" SET feed = only_feed;
    END IF;
  END IF;
END
$$;
--> statement-breakpoint
-- The outbox's hand-written indexes (0004), now per feed: one live send per (feed, external_id),
-- and each feed's deliverer reads its own due rows.
DROP INDEX "intake_sync"."outbox_one_live_send_idx";
--> statement-breakpoint
CREATE UNIQUE INDEX "outbox_one_live_send_idx" ON "intake_sync"."outbox" ("feed", "external_id")
  WHERE "kind" = 'send' AND "state" IN ('pending', 'delivered');
--> statement-breakpoint
DROP INDEX "intake_sync"."outbox_due_idx";
--> statement-breakpoint
CREATE INDEX "outbox_due_idx" ON "intake_sync"."outbox" ("feed", "next_attempt_at", "id") WHERE "state" = 'pending';
--> statement-breakpoint
-- Signatures change: drop the old forms (callers of the old forms resolve to the new ones through
-- the defaults), dependants first.
DROP FUNCTION "intake_sync"."register_prescription"(text, jsonb);
--> statement-breakpoint
DROP FUNCTION "intake_sync"."rematch_held"(text[], text[]);
--> statement-breakpoint
DROP FUNCTION "intake_sync"."_match_prescription"(text, text);
--> statement-breakpoint
DROP FUNCTION "intake_sync"."send_prescription"(jsonb);
--> statement-breakpoint
DROP FUNCTION "intake_sync"."cancel_prescription"(text);
--> statement-breakpoint
-- A feed name as FEED_NAME and FEEDS_FILE accept it; raises naming the argument, never guessing.
CREATE FUNCTION "intake_sync"."_require_feed"(feed text) RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
  IF feed IS NULL THEN
    RAISE EXCEPTION 'feed: required' USING ERRCODE = '23502', COLUMN = 'feed';
  END IF;
  IF feed !~ '^[a-z0-9_-]{1,64}$' THEN
    RAISE EXCEPTION 'feed: must be 1-64 of a-z 0-9 _ -' USING ERRCODE = '22023', COLUMN = 'feed';
  END IF;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_require_feed"(text) FROM PUBLIC;
--> statement-breakpoint
-- The match rule (as 0002's), within one feed: an event of feed A never matches a prescription of
-- feed B. Every branch is a lookup on an index leading with the feed (prescriptions_feed_*_idx);
-- LANGUAGE sql, STABLE, not STRICT, no SET clause and not SECURITY DEFINER, so the planner still
-- inlines it into the calling statement.
CREATE FUNCTION "intake_sync"."_match_prescription"(event_identity_key text, event_erx_message_id text, event_feed text)
RETURNS TABLE (prescription_id bigint, candidates integer, quarantine_reason text, quarantine_detail text)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN pg_catalog.cardinality(m.ids) = 1 THEN m.ids[1] END,
    COALESCE(pg_catalog.cardinality(m.ids), 0),
    CASE WHEN m.ids IS NULL THEN 'unmatched' WHEN pg_catalog.cardinality(m.ids) > 1 THEN 'ambiguous' END,
    CASE WHEN m.ids IS NULL THEN 'no local prescription matches its identity'
      WHEN pg_catalog.cardinality(m.ids) > 1 THEN pg_catalog.cardinality(m.ids) || ' local prescriptions match (external_id '
        || pg_catalog.array_to_string(m.external_ids[1:5], ', ')
        || CASE WHEN pg_catalog.cardinality(m.ids) > 5 THEN ', ...' ELSE '' END || ')'
    END
  FROM (
    SELECT pg_catalog.array_agg(c.id ORDER BY c.id) AS ids, pg_catalog.array_agg(c.external_id ORDER BY c.id) AS external_ids
    FROM (
      SELECT p.id, p.external_id FROM "intake_sync"."prescriptions" p
      WHERE event_erx_message_id IS NOT NULL AND p.feed = event_feed AND p.erx_message_id = event_erx_message_id
      UNION ALL
      SELECT p.id, p.external_id FROM "intake_sync"."prescriptions" p
      WHERE p.feed = event_feed AND p.identity_key = event_identity_key
        AND (event_erx_message_id IS NULL OR p.erx_message_id IS NULL)
        AND NOT EXISTS (
          SELECT 1 FROM "intake_sync"."prescriptions" x
          WHERE event_erx_message_id IS NOT NULL AND x.feed = event_feed AND x.erx_message_id = event_erx_message_id)
    ) c
  ) m
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_match_prescription"(text, text, text) FROM PUBLIC;
--> statement-breakpoint
-- 0002's rematch_held with a third, optional argument: the feed whose held events are re-evaluated
-- (null: every feed's). Each held event is matched within its own feed.
CREATE FUNCTION "intake_sync"."rematch_held"(identity_keys text[] DEFAULT NULL, erx_message_ids text[] DEFAULT NULL, feed text DEFAULT NULL)
RETURNS TABLE (examined integer, matched integer, still_unmatched integer, still_ambiguous integer)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_custom_plan
AS $$
#variable_conflict use_column
BEGIN
  PERFORM "intake_sync"."_require_read_committed"('rematch_held');
  PERFORM pg_catalog.pg_advisory_xact_lock(7306, pg_catalog.hashtext('intake_sync'));
  WITH held AS (
    SELECT q.id AS quarantine_id, e.id, e.feed, e.identity_key, e.erx_message_id, e.name, e.occurred_at, e.status_rank
    FROM "intake_sync"."quarantine" q
    JOIN "intake_sync"."events" e ON e.id = q.event_id
    WHERE q.resolved_at IS NULL AND q.reason IN ('unmatched', 'ambiguous') AND e.prescription_id IS NULL
      AND rematch_held.identity_keys IS NULL AND rematch_held.erx_message_ids IS NULL
      AND (rematch_held.feed IS NULL OR e.feed = rematch_held.feed)
    UNION ALL
    -- a held event's finding is keyed by the event's id (quarantine_key_key)
    SELECT q.id, e.id, e.feed, e.identity_key, e.erx_message_id, e.name, e.occurred_at, e.status_rank
    FROM "intake_sync"."events" e
    JOIN "intake_sync"."quarantine" q ON q.quarantine_key = e.id
    WHERE e.prescription_id IS NULL
      AND (e.identity_key = ANY (rematch_held.identity_keys) OR e.erx_message_id = ANY (rematch_held.erx_message_ids))
      AND (rematch_held.feed IS NULL OR e.feed = rematch_held.feed)
      AND q.resolved_at IS NULL AND q.reason IN ('unmatched', 'ambiguous')
  ),
  evaluated AS (
    SELECT held.*, m.prescription_id, m.candidates, m.quarantine_reason, m.quarantine_detail
    FROM held CROSS JOIN LATERAL "intake_sync"."_match_prescription"(held.identity_key, held.erx_message_id, held.feed) m
  ),
  linked AS (
    UPDATE "intake_sync"."events" e SET prescription_id = v.prescription_id
    FROM evaluated v WHERE e.id = v.id AND v.candidates = 1
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
    UPDATE "intake_sync"."quarantine" q SET resolved_at = pg_catalog.now()
    FROM evaluated v WHERE q.id = v.quarantine_id AND v.candidates = 1
  ),
  -- the same reason and wording as a page apply gives
  reclassified AS (
    UPDATE "intake_sync"."quarantine" q SET reason = v.quarantine_reason, detail = v.quarantine_detail
    FROM evaluated v WHERE q.id = v.quarantine_id AND v.candidates <> 1
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
REVOKE ALL ON FUNCTION "intake_sync"."rematch_held"(text[], text[], text) FROM PUBLIC;
--> statement-breakpoint
COMMENT ON FUNCTION "intake_sync"."rematch_held"(text[], text[], text) IS 're-evaluates held (unmatched/ambiguous) events against the local prescriptions of their own feed; null arguments: all of them (docs/sql-api/register.md)';
--> statement-breakpoint
-- 0002's register_prescription, per feed: upserts by (feed, external_id) and rematches that feed's
-- held events only.
CREATE FUNCTION "intake_sync"."register_prescription"(external_id text, identity jsonb, feed text DEFAULT 'default')
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
  RETURN result;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."register_prescription"(text, jsonb, text) FROM PUBLIC;
--> statement-breakpoint
COMMENT ON FUNCTION "intake_sync"."register_prescription"(text, jsonb, text) IS 'registers or updates a local prescription of a feed (default ''default'') received by fax or eRx and matches its held events (docs/sql-api/register.md)';
--> statement-breakpoint
-- A new column goes last: CREATE OR REPLACE VIEW keeps the existing ones in place.
CREATE OR REPLACE VIEW "intake_sync"."prescription_status" AS
SELECT p.external_id, p.status, p.status_occurred_at, p.cancellation_requested_at,
  (SELECT count(*) FROM "intake_sync"."events" e WHERE e.prescription_id = p.id)::integer AS events,
  p.updated_at, p.subscription_id, p.feed
FROM "intake_sync"."prescriptions" p;
--> statement-breakpoint
-- send_prescription(prescription, feed): queues POST /prescriptions for that feed's credentials.
CREATE FUNCTION "intake_sync"."send_prescription"(prescription jsonb, feed text DEFAULT 'default')
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
  RETURN row_id;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."send_prescription"(jsonb, text) FROM PUBLIC;
--> statement-breakpoint
-- cancel_prescription(external_id, feed): queues DELETE /prescriptions/{external_id} for that feed,
-- delivered after every earlier row of that (feed, external_id).
CREATE FUNCTION "intake_sync"."cancel_prescription"(external_id text, feed text DEFAULT 'default')
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
  RETURN row_id;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."cancel_prescription"(text, text) FROM PUBLIC;
--> statement-breakpoint
CREATE OR REPLACE VIEW "intake_sync"."outbox_status" AS
SELECT "id", "external_id", "kind", "state", "attempts", "last_error", "response_status", "in_doubt",
       "next_attempt_at", "created_at", "updated_at", "last_attempt_at", "completed_at", "feed"
FROM "intake_sync"."outbox";
--> statement-breakpoint
-- The change feed records each change's feed (0003's triggers, one column more).
CREATE OR REPLACE FUNCTION "intake_sync"."record_status_changes"() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  appended bigint;
BEGIN
  INSERT INTO "intake_sync"."status_changes"
    (prescription_id, feed, external_id, previous_status, new_status, event_id, occurred_at)
  SELECT n.id, n.feed, n.external_id, o.status, n.status, n.status_event_id, n.status_occurred_at
  FROM new_rows n JOIN old_rows o ON o.id = n.id
  WHERE n.status IS DISTINCT FROM o.status AND n.status IS NOT NULL
  ORDER BY n.id;
  GET DIAGNOSTICS appended = ROW_COUNT;
  IF appended > 0 THEN
    -- once per transaction: its deferred trigger stamps the commit
    INSERT INTO "intake_sync"."change_commits" (xid) VALUES (pg_current_xact_id()) ON CONFLICT (xid) DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "intake_sync"."record_inserted_status"() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  INSERT INTO "intake_sync"."status_changes"
    (prescription_id, feed, external_id, previous_status, new_status, event_id, occurred_at)
  VALUES (NEW.id, NEW.feed, NEW.external_id, NULL, NEW.status, NEW.status_event_id, NEW.status_occurred_at);
  INSERT INTO "intake_sync"."change_commits" (xid) VALUES (pg_current_xact_id()) ON CONFLICT (xid) DO NOTHING;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- status_changes_since() rows gain the feed, last.
ALTER TYPE "intake_sync"."status_change" ADD ATTRIBUTE feed text;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "intake_sync"."status_changes_since"("cursor" text, max_rows integer DEFAULT 1000)
RETURNS SETOF "intake_sync"."status_change"
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
  given_cursor ALIAS FOR $1;
  given_max ALIAS FOR $2;
  parts text[];
  after_seq bigint := 0;
  after_id bigint := 0;
BEGIN
  IF given_max IS NULL OR given_max < 1 OR given_max > 10000 THEN
    RAISE EXCEPTION 'status_changes_since: max_rows must be between 1 and 10000' USING ERRCODE = '22023';
  END IF;
  IF given_cursor IS NOT NULL THEN
    parts := regexp_match(given_cursor, '^v1:([0-9]{1,18}):([0-9]{1,18})$');
    IF parts IS NULL THEN
      RAISE EXCEPTION 'status_changes_since: cursor is malformed (pass null or a cursor this function returned)' USING ERRCODE = '22023';
    END IF;
    after_seq := parts[1]::bigint;
    after_id := parts[2]::bigint;
  END IF;
  RETURN QUERY
    SELECT 'v1:' || c.commit_seq || ':' || s.id, s.external_id, s.previous_status, s.new_status, s.event_id,
      s.occurred_at, s.changed_at, s.feed
    FROM "intake_sync"."change_commits" c
    JOIN "intake_sync"."status_changes" s ON s.xid = c.xid
    WHERE c.commit_seq >= after_seq AND (c.commit_seq > after_seq OR s.id > after_id)
    ORDER BY c.commit_seq, s.id
    LIMIT given_max;
END $$;

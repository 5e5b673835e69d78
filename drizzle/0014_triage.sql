-- Triage that resolves (issue 19 part 1): a view of the open quarantine for applications, one
-- finding's identity for triage staff (audited), resolve_quarantined() and dismiss_quarantined(),
-- and the subscription links that make a resolved subscription's later events match their
-- prescription first. rematch_held() is redefined to use the linked match and to record how a
-- finding closed.
--
-- A finding is OPEN while quarantine.resolved_at IS NULL, CLOSED once it is set (the retention
-- cleaner purges closed findings after RETAIN_QUARANTINE). quarantine.resolution says how it closed:
--   'matched'   a rematch (registration, import, `rematch`) found its one prescription
--   'resolved'  resolve_quarantined(): triage staff said which prescription it is
--   'dismissed' dismiss_quarantined(): not the vendor's; resolution_note holds the reason code
--   'expired'   the retention cleaner expired an open finding (RETAIN_OPEN_FINDINGS, 0012's _purge)
-- resolution_note: the external_id a finding was resolved to, or a dismissal's reason code.
-- Identifiers and codes only, never patient data.
ALTER TABLE "intake_sync"."quarantine" ADD COLUMN "resolution" text;
--> statement-breakpoint
ALTER TABLE "intake_sync"."quarantine" ADD COLUMN "resolution_note" text;
--> statement-breakpoint
-- every finding closed before this migration was closed by a rematch
UPDATE "intake_sync"."quarantine" SET "resolution" = CASE WHEN "expired_at" IS NOT NULL THEN 'expired' ELSE 'matched' END WHERE "resolved_at" IS NOT NULL;
--> statement-breakpoint
ALTER TABLE "intake_sync"."quarantine" ADD CONSTRAINT "quarantine_resolution_check"
  CHECK ("resolution" IS NULL OR "resolution" IN ('matched', 'resolved', 'dismissed', 'expired'));
--> statement-breakpoint
ALTER TABLE "intake_sync"."quarantine" ADD CONSTRAINT "quarantine_resolution_note_check"
  CHECK ("resolution_note" IS NULL OR pg_catalog.length("resolution_note") <= 512);
--> statement-breakpoint
-- A subscription belongs to one prescription: once triage linked it (resolve_quarantined), its
-- events match that prescription first, before the erx id and the identity. Keyed per feed: the
-- operator account issued the subscription id.
CREATE TABLE "intake_sync"."subscription_links" (
  "feed" text NOT NULL,
  "subscription_id" text NOT NULL,
  "prescription_id" bigint NOT NULL REFERENCES "intake_sync"."prescriptions" ("id") ON DELETE CASCADE,
  -- the event whose resolution made the link
  "event_id" text NOT NULL,
  "linked_at" timestamptz NOT NULL DEFAULT pg_catalog.now(),
  CONSTRAINT "subscription_links_pk" PRIMARY KEY ("feed", "subscription_id")
);
--> statement-breakpoint
CREATE INDEX "subscription_links_prescription_id_idx" ON "intake_sync"."subscription_links" ("prescription_id");
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."subscription_links" FROM PUBLIC;
--> statement-breakpoint
-- resolve_quarantined() applies the other held events of the resolved event's subscription: a
-- lookup, not a scan of the history. Partial, like the other held-event indexes (0002): only events
-- without a prescription are in it.
CREATE INDEX "events_held_subscription_idx" ON "intake_sync"."events" USING btree ("feed", "subscription_id") WHERE prescription_id IS NULL;
--> statement-breakpoint
-- The match rule with the subscription first: an event of a linked subscription matches that
-- prescription and nothing else; otherwise 0006's rule (erx id, then identity), unchanged. One
-- primary-key probe more per event (the link table is small: one row per resolved subscription).
-- LANGUAGE sql, STABLE, not STRICT, no SET clause, not SECURITY DEFINER: still inlined into the page
-- statement. The three-argument form (0006) stays for callers written against it.
CREATE FUNCTION "intake_sync"."_match_prescription"(event_identity_key text, event_erx_message_id text, event_feed text,
  event_subscription_id text)
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
  FROM (SELECT (SELECT l.prescription_id FROM "intake_sync"."subscription_links" l
                WHERE l.feed = event_feed AND l.subscription_id = event_subscription_id) AS linked) link
  CROSS JOIN LATERAL (
    SELECT pg_catalog.array_agg(c.id ORDER BY c.id) AS ids, pg_catalog.array_agg(c.external_id ORDER BY c.id) AS external_ids
    FROM (
      SELECT link.linked AS id, NULL::text AS external_id WHERE link.linked IS NOT NULL
      UNION ALL
      SELECT p.id, p.external_id FROM "intake_sync"."prescriptions" p
      WHERE link.linked IS NULL AND event_erx_message_id IS NOT NULL AND p.feed = event_feed AND p.erx_message_id = event_erx_message_id
      UNION ALL
      SELECT p.id, p.external_id FROM "intake_sync"."prescriptions" p
      WHERE link.linked IS NULL AND p.feed = event_feed AND p.identity_key = event_identity_key
        AND (event_erx_message_id IS NULL OR p.erx_message_id IS NULL)
        AND NOT EXISTS (
          SELECT 1 FROM "intake_sync"."prescriptions" x
          WHERE event_erx_message_id IS NOT NULL AND x.feed = event_feed AND x.erx_message_id = event_erx_message_id)
    ) c
  ) m
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_match_prescription"(text, text, text, text) FROM PUBLIC;
--> statement-breakpoint
-- 0007's rematch_held with the linked match (four arguments) and the finding's resolution recorded.
-- Same signature and results: register_prescription (0006, 0013) calls it with the identity keys and
-- erx ids it registered, `rematch` with one batch of identity keys at a time (each batch its own
-- short transaction), null/null re-evaluates every held event of the feed in one transaction.
CREATE OR REPLACE FUNCTION "intake_sync"."rematch_held"(identity_keys text[] DEFAULT NULL, erx_message_ids text[] DEFAULT NULL, feed text DEFAULT NULL)
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
REVOKE ALL ON FUNCTION "intake_sync"."rematch_held"(text[], text[], text) FROM PUBLIC;
--> statement-breakpoint
COMMENT ON FUNCTION "intake_sync"."rematch_held"(text[], text[], text) IS 're-evaluates held (unmatched/ambiguous) events against the local prescriptions of their own feed; null arguments: all of them (docs/sql-api/register.md)';
--> statement-breakpoint
-- The open quarantine for applications: what is waiting and why, never who it is about (the
-- identity is in show_quarantined(), which is audited). quarantine_key is what dismiss_quarantined()
-- takes for a malformed event that had no usable id (event_id null); for every other finding it is
-- the event id.
CREATE VIEW "intake_sync"."quarantine_open" AS
  SELECT q."feed", q."event_id", q."reason", e."name" AS "event_name", e."occurred_at", q."first_seen_at" AS "held_since",
    q."detail", q."seen_count", q."quarantine_key"
  FROM "intake_sync"."quarantine" q
  LEFT JOIN "intake_sync"."events" e ON e."feed" = q."feed" AND e."id" = q."event_id"
  WHERE q."resolved_at" IS NULL AND "intake_sync"."_feed_visible"(q."feed");
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."quarantine_open" FROM PUBLIC;
--> statement-breakpoint
-- A function a view calls is checked against the caller's privileges, not the view owner's: every
-- role that may read the view must be able to run its filter (0013_feed_access.sql grants the same;
-- it only answers which feeds the caller may see).
GRANT EXECUTE ON FUNCTION "intake_sync"."_feed_visible"(text) TO PUBLIC;
--> statement-breakpoint
COMMENT ON VIEW "intake_sync"."quarantine_open" IS 'open quarantine findings, no identity fields (docs/sql-api/triage.md)';
--> statement-breakpoint
-- An identifier argument of the triage functions: present (23502), 1-512 characters once trimmed as
-- the store trims (22023), named in the message, never quoted.
CREATE FUNCTION "intake_sync"."_require_identifier"(argument text, value text) RETURNS text
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  trimmed text := "intake_sync"."_js_trim"(value);
BEGIN
  IF value IS NULL THEN
    RAISE EXCEPTION '%: required', argument USING ERRCODE = '23502', COLUMN = argument;
  END IF;
  IF trimmed = '' OR pg_catalog.length(trimmed) > 512 THEN
    RAISE EXCEPTION '%: must be 1-512 characters', argument USING ERRCODE = '22023', COLUMN = argument;
  END IF;
  RETURN trimmed;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_require_identifier"(text, text) FROM PUBLIC;
--> statement-breakpoint
-- One finding with the identity the operator sent, for the triage staff who decide which
-- prescription it is. Reading patient data is an action: each call writes quarantine.show to the
-- audit trail in the caller's transaction. Closed findings too (the finding may just have been
-- resolved); refuses an unknown one (P0002).
CREATE FUNCTION "intake_sync"."show_quarantined"(feed text, event_id text)
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
COMMENT ON FUNCTION "intake_sync"."show_quarantined"(text, text) IS 'one quarantine finding with its prescription identity (PHI), audited as quarantine.show (docs/sql-api/triage.md)';
--> statement-breakpoint
-- "This event is prescription X": applies the held event to that local prescription, links the
-- event's subscription to it, and applies the other held events of that subscription (their open
-- unmatched/ambiguous findings close as 'resolved'). Statuses only move forward (the highest rank
-- wins, as in a page apply). From then on the subscription's events match that prescription first.
-- Takes the match lock exclusively (as a registration does) before it reads anything, so no page
-- applies between its reads and its writes, and a page waiting behind it sees the link. Runs in the
-- caller's transaction; READ COMMITTED only (the snapshot must be taken after the lock).
-- Refuses, writing nothing: a missing or malformed argument (23502/22023), an unknown prescription
-- or finding (P0002), a closed finding, one that is not unmatched/ambiguous, or a subscription
-- already linked to another prescription (55000).
CREATE FUNCTION "intake_sync"."resolve_quarantined"(feed text, event_id text, external_id text)
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
  PERFORM pg_catalog.pg_advisory_xact_lock(7306, pg_catalog.hashtext('intake_sync'));

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
REVOKE ALL ON FUNCTION "intake_sync"."resolve_quarantined"(text, text, text) FROM PUBLIC;
--> statement-breakpoint
COMMENT ON FUNCTION "intake_sync"."resolve_quarantined"(text, text, text) IS 'applies a held event (and its subscription''s other held events) to a local prescription and links the subscription to it, audited as quarantine.resolve (docs/sql-api/triage.md)';
--> statement-breakpoint
-- "This event is not ours": closes an open finding of any reason as 'dismissed' with a reason code
-- (a short code, not prose: it is stored and audited, and the audit trail holds no patient data).
-- The event itself stays as it is (held events keep no prescription). Takes the match lock
-- exclusively, so a rematch cannot close the same finding at the same time; runs in the caller's
-- transaction. Refuses, writing nothing: a missing or malformed argument (23502/22023), an unknown
-- finding (P0002), a closed one (55000). event_id: the event id, or the quarantine_key of a
-- malformed finding without one (quarantine_open shows it).
CREATE FUNCTION "intake_sync"."dismiss_quarantined"(feed text, event_id text, reason text)
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
  PERFORM pg_catalog.pg_advisory_xact_lock(7306, pg_catalog.hashtext('intake_sync'));
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
REVOKE ALL ON FUNCTION "intake_sync"."dismiss_quarantined"(text, text, text) FROM PUBLIC;
--> statement-breakpoint
COMMENT ON FUNCTION "intake_sync"."dismiss_quarantined"(text, text, text) IS 'closes an open quarantine finding that is not the vendor''s, with a reason code, audited as quarantine.dismiss (docs/sql-api/triage.md)';

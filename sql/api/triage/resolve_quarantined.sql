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

REVOKE ALL ON FUNCTION "intake_sync"."resolve_quarantined"(text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."resolve_quarantined"(text, text, text) IS 'applies a held event (and its subscription''s other held events) to a local prescription and links the subscription to it, audited as quarantine.resolve (docs/sql-api/triage.md)';

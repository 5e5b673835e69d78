-- One finding with the identity the operator sent, for the triage staff who decide which
-- prescription it is. Step two: it returns the identity only when a reveal request for this finding
-- by the same session_user, acting as the same role for the same person (`intake_sync.actor`),
-- (request_reveal) COMMITTED within the last 5 minutes; one written in the
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
    -- one login shared by several people (the console's SSO mode): the same role and the same person
    AND a.detail ->> 'role' = "intake_sync"."_calling_role"()
    AND a.on_behalf_of IS NOT DISTINCT FROM NULLIF(pg_catalog.current_setting('intake_sync.actor', true), '')
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

REVOKE ALL ON FUNCTION "intake_sync"."show_quarantined"(text, text) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."show_quarantined"(text, text) IS 'one quarantine finding with its prescription identity (PHI), only after a committed request_reveal (audited as quarantine.reveal_requested, then quarantine.show) (docs/sql-api/triage.md)';

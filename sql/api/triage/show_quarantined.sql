-- One finding with the identity the operator sent, for the triage staff who decide which
-- prescription it is. Reading patient data is an action: each call writes quarantine.show to the
-- audit trail in the caller's transaction. Closed findings too (the finding may just have been
-- resolved); refuses an unknown one (P0002).
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

COMMENT ON FUNCTION "intake_sync"."show_quarantined"(text, text) IS 'one quarantine finding with its prescription identity (PHI), audited as quarantine.show (docs/sql-api/triage.md)';

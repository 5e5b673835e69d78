-- "This event is not ours": closes an open finding of any reason as 'dismissed' with a reason code
-- (a short code, not prose: it is stored and audited, and the audit trail holds no patient data).
-- The event itself stays as it is (held events keep no prescription). Takes the match lock
-- exclusively, so a rematch cannot close the same finding at the same time; runs in the caller's
-- transaction. Refuses, writing nothing: a missing or malformed argument (23502/22023), an unknown
-- finding (P0002), a closed one (55000). event_id: the event id, or the quarantine_key of a
-- malformed finding without one (quarantine_open shows it).
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

REVOKE ALL ON FUNCTION "intake_sync"."dismiss_quarantined"(text, text, text) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."dismiss_quarantined"(text, text, text) IS 'closes an open quarantine finding that is not the vendor''s, with a reason code, audited as quarantine.dismiss (docs/sql-api/triage.md)';

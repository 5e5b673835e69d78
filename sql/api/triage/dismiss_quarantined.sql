-- "This event is not ours": closes an open finding of any reason as 'dismissed' with a reason code
-- (a short code, not prose: it is stored and audited, and the audit trail holds no patient data),
-- and with it every other open finding of the same subscription (issue 27 §6: symmetric with
-- resolve_quarantined, which applies every held event of the subscription), unless only_this_event.
-- A finding without a subscription (a malformed event) closes alone. One audit row per finding
-- closed. The events stay as they are (held events keep no prescription). Returns how many findings
-- it closed. Takes the match lock exclusively, so a rematch cannot close the same findings at the
-- same time; runs in the caller's transaction; READ COMMITTED only (the subscription's other
-- findings are read after the lock). Refuses, writing nothing: a missing or malformed argument
-- (23502/22023), an unknown finding (P0002), a closed one (55000). event_id: the event id, or the
-- quarantine_key of a malformed finding without one (quarantine_open shows it).
-- The 3-argument version of before 0020 is dropped by drizzle/0020_dismiss_by_subscription.sql.
CREATE OR REPLACE FUNCTION "intake_sync"."dismiss_quarantined"(feed text, event_id text, reason text, only_this_event boolean DEFAULT false)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
#variable_conflict use_column
DECLARE
  key text := "intake_sync"."_require_identifier"('event_id', dismiss_quarantined.event_id);
  finding record;
  other record;
  closed integer := 1;
BEGIN
  IF dismiss_quarantined.reason IS NULL THEN
    RAISE EXCEPTION 'reason: required' USING ERRCODE = '23502', COLUMN = 'reason';
  END IF;
  IF dismiss_quarantined.reason !~ '^[a-z][a-z0-9_.-]{0,63}$' THEN
    RAISE EXCEPTION 'reason: must be a code of 1-64 a-z 0-9 _ . - starting with a letter (not_ours, operator_test, ...)'
      USING ERRCODE = '22023', COLUMN = 'reason';
  END IF;
  IF dismiss_quarantined.only_this_event IS NULL THEN
    RAISE EXCEPTION 'only_this_event: required (true or false)' USING ERRCODE = '23502', COLUMN = 'only_this_event';
  END IF;
  PERFORM "intake_sync"."_require_feed"(dismiss_quarantined.feed);
  PERFORM "intake_sync"."_require_read_committed"('dismiss_quarantined');
  PERFORM "intake_sync"."_feed_lock"(dismiss_quarantined.feed, 'match', true);
  SELECT q.id, q.reason, q.resolution, q.resolved_at, e.subscription_id AS subscription INTO finding
  FROM "intake_sync"."quarantine" q
  LEFT JOIN "intake_sync"."events" e ON e.feed = q.feed AND e.id = q.event_id
  WHERE q.feed = dismiss_quarantined.feed AND q.quarantine_key = key
  FOR UPDATE OF q;
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
    pg_catalog.jsonb_build_object('reason', dismiss_quarantined.reason, 'finding_reason', finding.reason,
      'subscription_id', finding.subscription));
  IF dismiss_quarantined.only_this_event OR finding.subscription IS NULL THEN
    RETURN closed;
  END IF;
  -- the subscription's other open findings (any reason), each closed and audited on its own
  FOR other IN
    UPDATE "intake_sync"."quarantine" q
    SET resolved_at = pg_catalog.now(), resolution = 'dismissed', resolution_note = dismiss_quarantined.reason
    FROM "intake_sync"."events" e
    WHERE q.feed = dismiss_quarantined.feed AND q.resolved_at IS NULL AND q.id <> finding.id
      AND e.feed = q.feed AND e.id = q.event_id AND e.subscription_id = finding.subscription
    RETURNING q.quarantine_key, q.reason
  LOOP
    closed := closed + 1;
    PERFORM "intake_sync"."_audit"('quarantine.dismiss', dismiss_quarantined.feed, other.quarantine_key,
      pg_catalog.jsonb_build_object('reason', dismiss_quarantined.reason, 'finding_reason', other.reason,
        'subscription_id', finding.subscription, 'with_event_id', key));
  END LOOP;
  RETURN closed;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."dismiss_quarantined"(text, text, text, boolean) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."dismiss_quarantined"(text, text, text, boolean) IS 'closes an open quarantine finding that is not the vendor''s and (unless only_this_event) every open finding of its subscription, with a reason code, audited per finding as quarantine.dismiss; returns how many it closed (docs/sql-api/triage.md)';

-- Step one of reading a finding's identity (PHI): records the request as the audit row
-- `quarantine.reveal_requested` (actor: session_user and on_behalf_of; subject: the finding) with the id
-- of the transaction that writes it, and returns the row's id (audit_trail.id: its number within the
-- feed, 0032). The caller COMMITS it; only then does
-- show_quarantined() return the identity, for 5 minutes, to the same session_user acting as the same
-- role for the same person (`intake_sync.actor`, as the row's on_behalf_of). So every read of
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
  entry bigint;
BEGIN
  PERFORM "intake_sync"."_require_feed"(request_reveal.feed);
  PERFORM 1 FROM "intake_sync"."quarantine" q WHERE q.feed = request_reveal.feed AND q.quarantine_key = key;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'event_id: no quarantine finding with this id in feed %', request_reveal.feed
      USING ERRCODE = 'P0002', COLUMN = 'event_id';
  END IF;
  -- the top-level transaction (a savepoint's too): show_quarantined asks whether it committed; and
  -- the role the caller acts as (SET ROLE: the console's SSO mode logs in once for many people, each
  -- under their mapped role and `intake_sync.actor`), so the request counts for that role and person only
  entry := "intake_sync"."_audit_entry"('quarantine.reveal_requested', request_reveal.feed, key,
    pg_catalog.jsonb_build_object('xact', pg_catalog.pg_current_xact_id()::text, 'role', "intake_sync"."_calling_role"()));
  -- the row's number within its feed (audit_trail.id, 0032): its global id would count other feeds' rows
  RETURN (SELECT a."feed_serial" FROM "intake_sync"."audit_entries" a WHERE a."id" = entry);
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."request_reveal"(text, text) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."request_reveal"(text, text) IS 'records a request to read one quarantine finding''s identity (audit: quarantine.reveal_requested); commit it, then call show_quarantined within 5 minutes (docs/sql-api/triage.md)';

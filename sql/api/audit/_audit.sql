-- Records one action. Called by the SQL API's functions and by every CLI command that changes
-- state, inside their transaction, so the row commits or rolls back with the action.
-- on_behalf_of: the caller's own attribution (the CLI passes os user@host); when null, the
-- transaction's `intake_sync.actor` setting (SET LOCAL intake_sync.actor = '...') is used, which
-- lets an application name its end user without a new argument on every function. Both are checked
-- by _audit_entry (a safe character set) and are self-asserted.
-- quarantine.reveal_requested is reserved to request_reveal(), which records the transaction it
-- commits in: nobody else (the runtime role included) can write one that show_quarantined() accepts.
CREATE OR REPLACE FUNCTION "intake_sync"."_audit"(action text, feed text, subject text, detail jsonb DEFAULT '{}'::jsonb, on_behalf_of text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF action = 'quarantine.reveal_requested' THEN
    RAISE EXCEPTION 'action: quarantine.reveal_requested is written only by request_reveal()' USING ERRCODE = '42501', COLUMN = 'action';
  END IF;
  PERFORM "intake_sync"."_audit_entry"(action, feed, subject, detail, on_behalf_of);
END;
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_audit"(text, text, text, jsonb, text) FROM PUBLIC;

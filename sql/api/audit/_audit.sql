-- Records one action. Called by the SQL API's functions and by every CLI command that changes
-- state, inside their transaction, so the row commits or rolls back with the action.
-- on_behalf_of: the caller's own attribution (the CLI passes os user@host); when null, the
-- transaction's `intake_sync.actor` setting (SET LOCAL intake_sync.actor = '...') is used, which
-- lets an application name its end user without a new argument on every function.
CREATE OR REPLACE FUNCTION "intake_sync"."_audit"(action text, feed text, subject text, detail jsonb DEFAULT '{}'::jsonb, on_behalf_of text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  attributed text := pg_catalog.left(COALESCE(
    on_behalf_of, NULLIF(pg_catalog.current_setting('intake_sync.actor', true), '')), 256);
BEGIN
  IF action IS NULL OR action !~ '^[a-z][a-z_.]{0,63}$' THEN
    RAISE EXCEPTION 'action: must be 1-64 of a-z _ . starting with a letter' USING ERRCODE = '22023', COLUMN = 'action';
  END IF;
  IF detail IS NOT NULL AND pg_catalog.jsonb_typeof(detail) <> 'object' THEN
    RAISE EXCEPTION 'detail: must be a json object' USING ERRCODE = '22023', COLUMN = 'detail';
  END IF;
  IF pg_catalog.octet_length(COALESCE(detail, '{}'::jsonb)::text) > 8192 THEN
    RAISE EXCEPTION 'detail: must be at most 8192 bytes of json' USING ERRCODE = '22023', COLUMN = 'detail';
  END IF;
  INSERT INTO "intake_sync"."audit_entries" ("actor", "on_behalf_of", "client_addr", "action", "feed", "subject", "detail")
  VALUES (session_user, attributed, pg_catalog.inet_client_addr(), action, pg_catalog.left(feed, 64),
          pg_catalog.left(subject, 512), COALESCE(detail, '{}'::jsonb));
END;
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_audit"(text, text, text, jsonb, text) FROM PUBLIC;

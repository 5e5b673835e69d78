-- Records one action and returns its id: what _audit() does, for the functions that need the row's id
-- (request_reveal). on_behalf_of, or the transaction's `intake_sync.actor` setting when it is null, is
-- the caller's own word (self-asserted: nothing checks it): 1-128 of A-Z a-z 0-9 . _ @ : + -, so it
-- cannot carry a newline or a terminal escape into `audit list`. Refused otherwise (22023), naming it.
CREATE OR REPLACE FUNCTION "intake_sync"."_audit_entry"(action text, feed text, subject text, detail jsonb DEFAULT '{}'::jsonb, on_behalf_of text DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  attributed text := COALESCE(NULLIF(on_behalf_of, ''), NULLIF(pg_catalog.current_setting('intake_sync.actor', true), ''));
  entry_id bigint;
BEGIN
  IF action IS NULL OR action !~ '^[a-z][a-z_.]{0,63}$' THEN
    RAISE EXCEPTION 'action: must be 1-64 of a-z _ . starting with a letter' USING ERRCODE = '22023', COLUMN = 'action';
  END IF;
  IF attributed IS NOT NULL AND attributed !~ '^[A-Za-z0-9._@:+-]{1,128}$' THEN
    RAISE EXCEPTION 'on_behalf_of (or the setting intake_sync.actor): must be 1-128 of A-Z a-z 0-9 . _ @ : + -'
      USING ERRCODE = '22023', COLUMN = 'on_behalf_of';
  END IF;
  IF detail IS NOT NULL AND pg_catalog.jsonb_typeof(detail) <> 'object' THEN
    RAISE EXCEPTION 'detail: must be a json object' USING ERRCODE = '22023', COLUMN = 'detail';
  END IF;
  IF pg_catalog.octet_length(COALESCE(detail, '{}'::jsonb)::text) > 8192 THEN
    RAISE EXCEPTION 'detail: must be at most 8192 bytes of json' USING ERRCODE = '22023', COLUMN = 'detail';
  END IF;
  INSERT INTO "intake_sync"."audit_entries" ("actor", "on_behalf_of", "client_addr", "action", "feed", "subject", "detail")
  VALUES (session_user, attributed, pg_catalog.inet_client_addr(), action, pg_catalog.left(feed, 64),
          pg_catalog.left(subject, 512), COALESCE(detail, '{}'::jsonb))
  RETURNING "id" INTO entry_id;
  RETURN entry_id;
END;
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_audit_entry"(text, text, text, jsonb, text) FROM PUBLIC;

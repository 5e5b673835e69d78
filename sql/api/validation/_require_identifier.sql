-- An identifier argument of the triage functions: present (23502), 1-512 characters once trimmed as
-- the store trims (22023), named in the message, never quoted.
CREATE OR REPLACE FUNCTION "intake_sync"."_require_identifier"(argument text, value text) RETURNS text
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

REVOKE ALL ON FUNCTION "intake_sync"."_require_identifier"(text, text) FROM PUBLIC;

-- String.prototype.toUpperCase(), likewise.
CREATE OR REPLACE FUNCTION "intake_sync"."_js_upper"(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN pg_catalog.octet_length(value) = pg_catalog.char_length(value) THEN pg_catalog.upper(value COLLATE "C")
    ELSE "intake_sync"."_js_upper_unicode"(value) END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_js_upper"(text) FROM PUBLIC;

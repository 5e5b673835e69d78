-- String.prototype.toLowerCase(): text that is all ASCII (one byte per character, the common
-- case) stays one inlined expression.
CREATE OR REPLACE FUNCTION "intake_sync"."_js_lower"(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN pg_catalog.octet_length(value) = pg_catalog.char_length(value) THEN pg_catalog.lower(value COLLATE "C")
    ELSE "intake_sync"."_js_lower_unicode"(value) END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_js_lower"(text) FROM PUBLIC;

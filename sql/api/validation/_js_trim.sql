-- String.prototype.trim(). Not STRICT, one expression: the planner inlines it into its caller.
CREATE OR REPLACE FUNCTION "intake_sync"."_js_trim"(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT pg_catalog.btrim(value, "intake_sync"."_js_whitespace"()) $$;

REVOKE ALL ON FUNCTION "intake_sync"."_js_trim"(text) FROM PUBLIC;

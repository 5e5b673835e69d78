-- normaliseErx(): trimmed; empty means none.
CREATE OR REPLACE FUNCTION "intake_sync"."_normalise_erx"(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT NULLIF("intake_sync"."_js_trim"(value), '') $$;

REVOKE ALL ON FUNCTION "intake_sync"."_normalise_erx"(text) FROM PUBLIC;

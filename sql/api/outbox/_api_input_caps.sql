-- Issue 25 item 3: the SQL API's input is bounded. The caps are src/intake/limits.ts's
-- (MAX_API_BODY_BYTES, MAX_FREE_TEXT_LENGTH for FREE_TEXT_KEYS, MAX_IDENTITY_FIELD_LENGTH for every
-- other string), checked equal by test/sql-api/outbox/input-caps.test.ts. Returns the first
-- cap broken as (field, message, SQLSTATE 22001), or null: the body's size first, so nothing larger
-- than the cap is ever walked, then each string in path order (the path names the field, never its value).
CREATE OR REPLACE FUNCTION "intake_sync"."_api_input_caps"() RETURNS jsonb
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT '{"body_bytes": 65536, "free_text": 2048, "other_text": 256, "free_text_keys": ["note", "sig_text", "text"]}'::jsonb
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_api_input_caps"() FROM PUBLIC;

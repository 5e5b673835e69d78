-- normaliseDate(): YYYY-MM-DD from YYYY-MM-DD, an ISO timestamp (its calendar date as written),
-- YYYYMMDD or M/D/YYYY; null when the format is none of these or the day does not exist.
-- [0-9], not \d: JavaScript's \d is ASCII only, Postgres's follows the locale.
CREATE OR REPLACE FUNCTION "intake_sync"."_normalise_date"(value text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  t text := "intake_sync"."_js_trim"(value);
  ymd text[];
  us text[];
BEGIN
  ymd := COALESCE(
    pg_catalog.regexp_match(t, '^([0-9]{4})-([0-9]{2})-([0-9]{2})$'),
    pg_catalog.regexp_match(t, '^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.][0-9]+)?)?(?:[Zz]|[-+][0-9]{2}(?::?[0-9]{2})?)?$'),
    pg_catalog.regexp_match(t, '^([0-9]{4})([0-9]{2})([0-9]{2})$'));
  IF ymd IS NOT NULL THEN
    RETURN "intake_sync"."_calendar_date"(ymd[1]::integer, ymd[2]::integer, ymd[3]::integer);
  END IF;
  us := pg_catalog.regexp_match(t, '^([0-9]{1,2})/([0-9]{1,2})/([0-9]{4})$');
  IF us IS NOT NULL THEN
    RETURN "intake_sync"."_calendar_date"(us[3]::integer, us[1]::integer, us[2]::integer);
  END IF;
  RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_normalise_date"(text) FROM PUBLIC;

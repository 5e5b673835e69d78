-- isCalendarDate: YYYY-MM-DD and a real day. JavaScript's Date.UTC maps years 0-99 to 1900-1999,
-- so the client refuses them: so does this.
CREATE OR REPLACE FUNCTION "intake_sync"."_is_calendar_date"(value text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  y int;
  m int;
  d int;
BEGIN
  IF value !~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' THEN
    RETURN false;
  END IF;
  y := substr(value, 1, 4)::int;
  m := substr(value, 6, 2)::int;
  d := substr(value, 9, 2)::int;
  IF y < 100 OR m < 1 OR m > 12 OR d < 1 THEN
    RETURN false;
  END IF;
  RETURN d <= extract(day FROM make_date(y, m, 1) + interval '1 month' - interval '1 day');
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_is_calendar_date"(text) FROM PUBLIC;

-- normaliseDate's calendar check: the day must exist in the proleptic Gregorian calendar.
CREATE OR REPLACE FUNCTION "intake_sync"."_calendar_date"(y integer, m integer, d integer) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
  SELECT CASE WHEN m BETWEEN 1 AND 12 AND d BETWEEN 1 AND (CASE
      WHEN m = 2 THEN CASE WHEN (y % 4 = 0 AND y % 100 <> 0) OR y % 400 = 0 THEN 29 ELSE 28 END
      WHEN m IN (4, 6, 9, 11) THEN 30
      ELSE 31 END)
    THEN pg_catalog.lpad(y::text, 4, '0') || '-' || pg_catalog.lpad(m::text, 2, '0') || '-' || pg_catalog.lpad(d::text, 2, '0')
  END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_calendar_date"(integer, integer, integer) FROM PUBLIC;

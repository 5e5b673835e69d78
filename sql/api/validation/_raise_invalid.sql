-- Raises the problems found, all of them in one message: 23502 when a required value is missing,
-- else 22023. Never returns when there is any.
CREATE OR REPLACE FUNCTION "intake_sync"."_raise_invalid"(problems text[]) RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
  IF pg_catalog.cardinality(problems) = 0 THEN
    RETURN;
  END IF;
  RAISE EXCEPTION USING
    MESSAGE = pg_catalog.array_to_string(problems, '; '),
    ERRCODE = CASE WHEN EXISTS (SELECT 1 FROM pg_catalog.unnest(problems) AS p WHERE p LIKE '%: required') THEN '23502' ELSE '22023' END;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_raise_invalid"(text[]) FROM PUBLIC;

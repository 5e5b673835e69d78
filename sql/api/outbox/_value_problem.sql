-- One value against one rule. Returns NULL when it passes, else {path, message, sqlstate}.
CREATE OR REPLACE FUNCTION "intake_sync"."_value_problem"(present boolean, value jsonb, path text, rule text)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  base text := regexp_replace(rule, '\?+$', '');
  kind text := CASE WHEN value IS NULL THEN 'undefined' ELSE jsonb_typeof(value) END;
  s text;
  n numeric;
  element jsonb;
  i int := 0;
  problem text[];
BEGIN
  IF NOT present OR kind = 'null' THEN
    IF rule LIKE '%??' OR (rule LIKE '%?' AND NOT present) THEN
      RETURN NULL;
    END IF;
    RETURN ARRAY[path, 'is required', '23502'];
  END IF;

  IF base LIKE 'obj:%' THEN
    IF kind <> 'object' THEN
      RETURN ARRAY[path, 'must be an object', '22023'];
    END IF;
    RETURN "intake_sync"."_object_problem"(value, path, substr(base, 5));
  END IF;
  IF base LIKE 'arr:%' THEN
    IF kind <> 'array' THEN
      RETURN ARRAY[path, 'must be an array', '22023'];
    END IF;
    FOR element IN SELECT e FROM jsonb_array_elements(value) AS e LOOP
      IF jsonb_typeof(element) <> 'object' THEN
        RETURN ARRAY[path || '.' || i, 'must be an object', CASE WHEN jsonb_typeof(element) = 'null' THEN '23502' ELSE '22023' END];
      END IF;
      problem := "intake_sync"."_object_problem"(element, path || '.' || i, substr(base, 5));
      IF problem IS NOT NULL THEN
        RETURN problem;
      END IF;
      i := i + 1;
    END LOOP;
    RETURN NULL;
  END IF;

  IF base LIKE 'int%' THEN
    IF kind <> 'number' THEN
      RETURN ARRAY[path, 'must be a number', '22023'];
    END IF;
    n := value::text::numeric;
    -- zod's int() is Number.isSafeInteger
    IF n <> trunc(n) OR abs(n) > 9007199254740991 THEN
      RETURN ARRAY[path, 'must be an integer', '22023'];
    END IF;
    IF base = 'int>=0' AND n < 0 THEN
      RETURN ARRAY[path, 'must be 0 or more', '22023'];
    ELSIF base = 'int0..9' AND (n < 0 OR n > 9) THEN
      RETURN ARRAY[path, 'must be from 0 to 9', '22023'];
    ELSIF base = 'int>0' AND n <= 0 THEN
      RETURN ARRAY[path, 'must be positive', '22023'];
    END IF;
    RETURN NULL;
  END IF;

  -- every other rule is about a string
  IF kind <> 'string' THEN
    RETURN ARRAY[path, 'must be a string', '22023'];
  END IF;
  s := value #>> '{}';
  IF base = 'string' THEN
    RETURN NULL;
  ELSIF base = 'nonempty' THEN
    IF "intake_sync"."_js_trim"(s) = '' THEN
      RETURN ARRAY[path, 'must not be empty', '22023'];
    END IF;
  ELSIF base = 'date' THEN
    IF NOT "intake_sync"."_is_calendar_date"(s) THEN
      RETURN ARRAY[path, 'must be a date in YYYY-MM-DD format', '22023'];
    END IF;
  ELSIF base = 'gender' THEN
    IF s NOT IN ('M', 'F', 'N', 'U') THEN
      RETURN ARRAY[path, 'must be one of M, F, N, U', '22023'];
    END IF;
  ELSIF base = 'phone' THEN
    IF NOT "intake_sync"."_is_valid_us_phone"(s) THEN
      RETURN ARRAY[path, 'must be a US phone number (10 digits)', '22023'];
    END IF;
  ELSIF base = 'email' THEN
    -- zod 4's default email pattern, character for character
    IF s !~ '^(?:[A-Za-z0-9_''+-]+\.)*[A-Za-z0-9_''+-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9-]*\.)+[A-Za-z]{2,}$' THEN
      RETURN ARRAY[path, 'must be an email address', '22023'];
    END IF;
  ELSIF base = 'state' THEN
    IF s NOT IN ('AL', 'AK', 'AZ', 'AR', 'CA', 'CO', 'CT', 'DE', 'DC', 'FL', 'GA', 'HI', 'ID', 'IL', 'IN', 'IA', 'KS',
                 'KY', 'LA', 'ME', 'MD', 'MA', 'MI', 'MN', 'MS', 'MO', 'MT', 'NE', 'NV', 'NH', 'NJ', 'NM', 'NY', 'NC',
                 'ND', 'OH', 'OK', 'OR', 'PA', 'RI', 'SC', 'SD', 'TN', 'TX', 'UT', 'VT', 'VA', 'WA', 'WV', 'WI', 'WY') THEN
      RETURN ARRAY[path, 'must be a two-letter US state abbreviation (50 states and DC)', '22023'];
    END IF;
  ELSIF base = 'zip' THEN
    IF s !~ '^[0-9]{5}$' THEN
      RETURN ARRAY[path, 'must be five digits', '22023'];
    END IF;
  ELSIF base = 'ndc' THEN
    IF s NOT IN ('00002015204', '00002024304', '00002121404', '00002134004', '00002142304', '00002200204') THEN
      RETURN ARRAY[path, 'must be one of the NDCs the operator dispenses', '22023'];
    END IF;
  ELSIF base = 'npi' THEN
    IF NOT "intake_sync"."_is_valid_npi"(s) THEN
      RETURN ARRAY[path, 'must be a 10-digit NPI with a valid check digit', '22023'];
    END IF;
  ELSIF base = 'pharmacy_npi' THEN
    IF s <> '1689411712' THEN
      RETURN ARRAY[path, 'must be the operator pharmacy NPI 1689411712', '22023'];
    END IF;
  ELSIF base = 'pharmacy_ncpdpid' THEN
    IF s <> '3692539' THEN
      RETURN ARRAY[path, 'must be the operator pharmacy NCPDP ID 3692539', '22023'];
    END IF;
  ELSIF base = 'allergy_source' THEN
    IF s NOT IN ('C', 'P', 'O') THEN
      RETURN ARRAY[path, 'must be one of C, P, O', '22023'];
    END IF;
  ELSE
    RAISE EXCEPTION 'intake_sync: unknown validation rule %', rule USING ERRCODE = 'XX000';
  END IF;
  RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_value_problem"(boolean, jsonb, text, text) FROM PUBLIC;

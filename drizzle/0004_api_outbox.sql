-- The outbox's SQL API: send_prescription / cancel_prescription write one row of
-- "intake_sync"."outbox" in the caller's transaction (so the vendor's own commit and its request to
-- the operator stand or fall together); the leader delivers the rows (src/sync/outbox-*.ts).
-- The validator below mirrors the client's zod schema (src/intake/prescription.ts, fields.ts) field
-- by field, in the schema's key order, so the first problem it names is zod's first issue
-- (test/sql-api/outbox-validation-parity.test.ts holds both to one table of cases).
-- Helpers are private (underscore, EXECUTE revoked from PUBLIC); errors name a field path, never a value.

-- "intake_sync"."_js_trim"(text) (String.prototype.trim) and "intake_sync"."_is_valid_npi"(text)
-- (isValidNpi) come from 0002_api_register: one definition each, shared with the identity rules.
-- isValidUsPhone: NANP, 10 digits after an optional +1/1, separators allowed; JavaScript's \s is Unicode-wide
CREATE OR REPLACE FUNCTION "intake_sync"."_is_valid_us_phone"(value text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  digits text;
BEGIN
  IF value !~ '^[-+0-9().\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+$' THEN
    RETURN false;
  END IF;
  digits := regexp_replace(value, '[^0-9]', '', 'g');
  IF left("intake_sync"."_js_trim"(value), 1) = '+' AND left(digits, 1) <> '1' THEN
    RETURN false;
  END IF;
  IF length(digits) = 11 AND left(digits, 1) = '1' THEN
    digits := substr(digits, 2);
  END IF;
  RETURN digits ~ '^[2-9][0-9]{2}[2-9][0-9]{6}$';
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_is_valid_us_phone"(text) FROM PUBLIC;
--> statement-breakpoint
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
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_is_calendar_date"(text) FROM PUBLIC;
--> statement-breakpoint
-- The request schema as data: per object, its fields in zod's key order with one rule each.
-- Rule suffixes: '?' optional (absent is fine, null is not), '??' nullish (absent or null).
-- 'obj:NAME' / 'arr:NAME' recurse into another object's fields.
CREATE OR REPLACE FUNCTION "intake_sync"."_prescription_fields"(object_name text)
RETURNS TABLE (ord int, key text, rule text)
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT f.ord, f.key, f.rule FROM (VALUES
    ('prescription', 1, 'external_id', 'nonempty'),
    ('prescription', 2, 'written_date', 'date'),
    ('prescription', 3, 'number_of_refills', 'int>=0'),
    ('prescription', 4, 'substitutions', 'int0..9'),
    ('prescription', 5, 'sig_text', 'string?'),
    ('prescription', 6, 'note', 'string?'),
    ('prescription', 7, 'originating_entity', 'string?'),
    ('prescription', 8, 'patient', 'obj:patient'),
    ('prescription', 9, 'medication', 'obj:medication'),
    ('prescription', 10, 'prescriber', 'obj:prescriber'),
    ('prescription', 11, 'pharmacy', 'obj:pharmacy'),
    ('prescription', 12, 'allergies', 'arr:allergy??'),
    ('patient', 1, 'first_name', 'nonempty'),
    ('patient', 2, 'middle_name', 'string??'),
    ('patient', 3, 'last_name', 'nonempty'),
    ('patient', 4, 'dob', 'date'),
    ('patient', 5, 'gender', 'gender'),
    ('patient', 6, 'primary_phone', 'phone'),
    ('patient', 7, 'email', 'email??'),
    ('patient', 8, 'address', 'obj:address'),
    ('address', 1, 'address1', 'nonempty'),
    ('address', 2, 'address2', 'string??'),
    ('address', 3, 'city', 'nonempty'),
    ('address', 4, 'state', 'state'),
    ('address', 5, 'zip', 'zip'),
    ('medication', 1, 'name', 'nonempty'),
    ('medication', 2, 'ndc', 'ndc'),
    ('medication', 3, 'quantity', 'nonempty'),
    ('medication', 4, 'quantity_unit_code', 'nonempty'),
    ('medication', 5, 'days_supply', 'int>0??'),
    ('medication', 6, 'diagnosis', 'obj:diagnosis?'),
    ('diagnosis', 1, 'primary_icd10_code', 'nonempty'),
    ('diagnosis', 2, 'primary_icd10_description', 'nonempty'),
    ('diagnosis', 3, 'secondary_icd10_code', 'string??'),
    ('diagnosis', 4, 'secondary_icd10_description', 'string??'),
    ('prescriber', 1, 'suffix', 'string??'),
    ('prescriber', 2, 'npi', 'npi'),
    ('prescriber', 3, 'primary_phone', 'phone'),
    ('prescriber', 4, 'fax', 'phone??'),
    ('prescriber', 5, 'first_name', 'string?'),
    ('prescriber', 6, 'middle_name', 'string??'),
    ('prescriber', 7, 'last_name', 'string?'),
    ('prescriber', 8, 'address', 'obj:address?'),
    ('pharmacy', 1, 'npi', 'pharmacy_npi'),
    ('pharmacy', 2, 'ncpdpid', 'pharmacy_ncpdpid'),
    ('pharmacy', 3, 'primary_phone', 'phone'),
    ('pharmacy', 4, 'fax', 'phone??'),
    ('pharmacy', 5, 'name', 'string?'),
    ('pharmacy', 6, 'address', 'obj:address?'),
    ('allergy', 1, 'source_of_information', 'allergy_source'),
    ('allergy', 2, 'effective_date', 'string??'),
    ('allergy', 3, 'adverse_event', 'obj:adverse_event'),
    ('allergy', 4, 'drug_product', 'obj:coded_text'),
    ('allergy', 5, 'severity', 'obj:coded_text?'),
    ('adverse_event', 1, 'text', 'nonempty'),
    ('adverse_event', 2, 'code', 'string??'),
    ('coded_text', 1, 'code', 'string??'),
    ('coded_text', 2, 'text', 'string?')
  ) AS f(object_name, ord, key, rule)
  WHERE f.object_name = _prescription_fields.object_name
  ORDER BY f.ord
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_prescription_fields"(text) FROM PUBLIC;
--> statement-breakpoint
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
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_value_problem"(boolean, jsonb, text, text) FROM PUBLIC;
--> statement-breakpoint
-- The first problem of one object's fields (then its own refinements, which zod runs only on an
-- object whose fields passed); NULL when it is valid.
CREATE OR REPLACE FUNCTION "intake_sync"."_object_problem"(obj jsonb, path text, object_name text)
RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  field record;
  problem text[];
  has_code boolean;
  has_description boolean;
BEGIN
  FOR field IN SELECT f.key, f.rule FROM "intake_sync"."_prescription_fields"(object_name) AS f ORDER BY f.ord LOOP
    problem := "intake_sync"."_value_problem"(obj ? field.key, obj -> field.key, path || '.' || field.key, field.rule);
    IF problem IS NOT NULL THEN
      RETURN problem;
    END IF;
  END LOOP;
  IF object_name = 'diagnosis' THEN
    -- a secondary code without its description (or the reverse); '' counts as absent, as in JavaScript
    has_code := coalesce(obj ->> 'secondary_icd10_code', '') <> '';
    has_description := coalesce(obj ->> 'secondary_icd10_description', '') <> '';
    IF has_code <> has_description THEN
      RETURN ARRAY[path || CASE WHEN has_code THEN '.secondary_icd10_description' ELSE '.secondary_icd10_code' END,
                   'secondary code and description must be given together', '22023'];
    END IF;
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_object_problem"(jsonb, text, text) FROM PUBLIC;
--> statement-breakpoint
-- The first problem of a POST /prescriptions `prescription` object: {path, message, sqlstate} or NULL.
CREATE OR REPLACE FUNCTION "intake_sync"."_prescription_problem"(prescription jsonb)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT "intake_sync"."_value_problem"(prescription IS NOT NULL, prescription, 'prescription', 'obj:prescription')
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_prescription_problem"(jsonb) FROM PUBLIC;
--> statement-breakpoint
-- At most one live send per external_id: a second one could only end in the operator's 422.
-- A failed send does not count, so a corrected prescription can be queued again.
CREATE UNIQUE INDEX IF NOT EXISTS "outbox_one_live_send_idx" ON "intake_sync"."outbox" ("external_id")
  WHERE "kind" = 'send' AND "state" IN ('pending', 'delivered');
--> statement-breakpoint
-- Due rows for the leader: pending, by next attempt time.
CREATE INDEX IF NOT EXISTS "outbox_due_idx" ON "intake_sync"."outbox" ("next_attempt_at", "id") WHERE "state" = 'pending';
--> statement-breakpoint
-- send_prescription(prescription jsonb): queues POST /prescriptions in the caller's transaction.
-- Returns the outbox row id. Refuses (writing nothing) a prescription the client would refuse.
CREATE OR REPLACE FUNCTION "intake_sync"."send_prescription"(prescription jsonb)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  problem text[] := "intake_sync"."_prescription_problem"(prescription);
  external text;
  row_id bigint;
BEGIN
  IF problem IS NOT NULL THEN
    RAISE EXCEPTION '%: %', problem[1], problem[2] USING ERRCODE = problem[3], COLUMN = problem[1];
  END IF;
  external := "intake_sync"."_js_trim"(prescription ->> 'external_id');
  INSERT INTO "intake_sync"."outbox" ("external_id", "kind", "body")
  VALUES (external, 'send', prescription)
  ON CONFLICT ("external_id") WHERE "kind" = 'send' AND "state" IN ('pending', 'delivered') DO NOTHING
  RETURNING "id" INTO row_id;
  IF row_id IS NULL THEN
    RAISE EXCEPTION 'prescription.external_id: already in the outbox (pending or delivered)'
      USING ERRCODE = '23505', COLUMN = 'prescription.external_id';
  END IF;
  RETURN row_id;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."send_prescription"(jsonb) FROM PUBLIC;
--> statement-breakpoint
-- cancel_prescription(external_id text): queues DELETE /prescriptions/{external_id}; it is delivered
-- after every earlier row for that external_id (never before its send). Returns the outbox row id.
CREATE OR REPLACE FUNCTION "intake_sync"."cancel_prescription"(external_id text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  external text := "intake_sync"."_js_trim"(cancel_prescription.external_id);
  row_id bigint;
BEGIN
  IF external IS NULL THEN
    RAISE EXCEPTION 'external_id: is required' USING ERRCODE = '23502', COLUMN = 'external_id';
  END IF;
  IF external = '' THEN
    RAISE EXCEPTION 'external_id: must not be empty' USING ERRCODE = '22023', COLUMN = 'external_id';
  END IF;
  INSERT INTO "intake_sync"."outbox" ("external_id", "kind") VALUES (external, 'cancel') RETURNING "id" INTO row_id;
  RETURN row_id;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."cancel_prescription"(text) FROM PUBLIC;
--> statement-breakpoint
-- outbox_status: each outbox row without its body (the body is PHI; the vendor has it already).
CREATE OR REPLACE VIEW "intake_sync"."outbox_status" AS
SELECT "id", "external_id", "kind", "state", "attempts", "last_error", "response_status", "in_doubt",
       "next_attempt_at", "created_at", "updated_at", "last_attempt_at", "completed_at"
FROM "intake_sync"."outbox";
--> statement-breakpoint
REVOKE ALL ON "intake_sync"."outbox_status" FROM PUBLIC;

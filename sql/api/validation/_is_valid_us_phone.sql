-- The outbox's SQL API: send_prescription / cancel_prescription write one row of
-- "intake_sync"."outbox" in the caller's transaction (so the vendor's own commit and its request to
-- the operator stand or fall together); the leader delivers the rows (src/sync/outbox-*.ts).
-- The validator below mirrors the client's zod schema (src/intake/prescription.ts, fields.ts) field
-- by field, in the schema's key order, so the first problem it names is zod's first issue
-- (test/sql-api/outbox/_prescription_problem.parity.test.ts holds both to one table of cases).
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

REVOKE ALL ON FUNCTION "intake_sync"."_is_valid_us_phone"(text) FROM PUBLIC;

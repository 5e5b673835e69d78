-- identityKey() of an identity already validated: the seven fields normalised as the worker does
-- (names NFC, trimmed, lowercased; state trimmed, uppercased; dates normalised or else trimmed and
-- lowercased; npi trimmed; ndc without hyphens and whitespace), joined by U+001F. ASCII names are
-- NFC already and skip NORMALIZE().
CREATE OR REPLACE FUNCTION "intake_sync"."_identity_key"(identity jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
  first_name text := identity ->> 'patient_first_name';
  last_name text := identity ->> 'patient_last_name';
  dob text := identity ->> 'patient_dob';
  written text := identity ->> 'written_date';
BEGIN
  IF pg_catalog.octet_length(first_name) <> pg_catalog.char_length(first_name) THEN
    first_name := NORMALIZE(first_name, NFC);
  END IF;
  IF pg_catalog.octet_length(last_name) <> pg_catalog.char_length(last_name) THEN
    last_name := NORMALIZE(last_name, NFC);
  END IF;
  RETURN "intake_sync"."_js_lower"("intake_sync"."_js_trim"(first_name))
    || E'\u001f' || "intake_sync"."_js_lower"("intake_sync"."_js_trim"(last_name))
    || E'\u001f' || "intake_sync"."_js_upper"("intake_sync"."_js_trim"(identity ->> 'patient_state'))
    || E'\u001f' || COALESCE("intake_sync"."_normalise_date"(dob), "intake_sync"."_js_lower"("intake_sync"."_js_trim"(dob)))
    || E'\u001f' || "intake_sync"."_js_trim"(identity ->> 'prescriber_npi')
    || E'\u001f' || COALESCE("intake_sync"."_normalise_date"(written), "intake_sync"."_js_lower"("intake_sync"."_js_trim"(written)))
    || E'\u001f' || pg_catalog.translate(identity ->> 'drug_ndc', '-' || "intake_sync"."_js_whitespace"(), '');
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_identity_key"(jsonb) FROM PUBLIC;

-- What is wrong with a PrescriptionIdentity, as "identity.<field>: <rule>" in the schema's field
-- order (the zod schemas of src/intake/identity.ts): loose = prescriptionIdentitySchema (strings
-- where strings are required), strict = prescriptionIdentityRequestSchema (also not blank, and a
-- valid NPI), which `prescriptions import` applies. Paths and rules only: values can be PHI.
CREATE OR REPLACE FUNCTION "intake_sync"."_identity_problems"(identity jsonb, strict boolean) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
  problems text[] := '{}';
  field text;
  value jsonb;
BEGIN
  IF identity IS NULL THEN
    RETURN ARRAY['identity: required'];
  END IF;
  IF pg_catalog.jsonb_typeof(identity) <> 'object' THEN
    RETURN ARRAY['identity: must be a JSON object'];
  END IF;
  FOREACH field IN ARRAY ARRAY['patient_first_name', 'patient_last_name', 'patient_state', 'patient_dob',
                               'erx_message_id', 'prescriber_npi', 'written_date', 'drug_ndc'] LOOP
    value := identity -> field;
    IF field = 'erx_message_id' THEN
      IF value IS NOT NULL AND pg_catalog.jsonb_typeof(value) NOT IN ('string', 'null') THEN
        problems := problems || ('identity.' || field || ': must be a string or null');
      END IF;
    ELSIF value IS NULL THEN
      problems := problems || ('identity.' || field || ': required');
    ELSIF pg_catalog.jsonb_typeof(value) <> 'string' THEN
      problems := problems || ('identity.' || field || ': must be a string');
    ELSIF strict AND field = 'prescriber_npi' THEN
      IF NOT "intake_sync"."_is_valid_npi"(value #>> '{}') THEN
        problems := problems || ('identity.' || field || ': must be a 10-digit NPI with a valid check digit');
      END IF;
    ELSIF strict AND "intake_sync"."_js_trim"(value #>> '{}') = '' THEN
      problems := problems || ('identity.' || field || ': must not be empty');
    END IF;
  END LOOP;
  RETURN problems;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_identity_problems"(jsonb, boolean) FROM PUBLIC;

-- The composite match key of a PrescriptionIdentity (jsonb object), exactly as the worker computes
-- it for events and local prescriptions. Raises naming the field when a required string is
-- missing or is not a string.
CREATE OR REPLACE FUNCTION "intake_sync"."identity_key"(identity jsonb) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  PERFORM "intake_sync"."_raise_invalid"("intake_sync"."_identity_problems"(identity, false));
  RETURN "intake_sync"."_identity_key"(identity);
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."identity_key"(jsonb) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."identity_key"(jsonb) IS 'the composite match key of a PrescriptionIdentity, as the worker computes it (docs/sql-api/register.md)';

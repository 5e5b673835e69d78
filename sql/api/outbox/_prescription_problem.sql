-- The first problem of a POST /prescriptions `prescription` object: {path, message, sqlstate} or NULL.
CREATE OR REPLACE FUNCTION "intake_sync"."_prescription_problem"(prescription jsonb)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT "intake_sync"."_value_problem"(prescription IS NOT NULL, prescription, 'prescription', 'obj:prescription')
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_prescription_problem"(jsonb) FROM PUBLIC;

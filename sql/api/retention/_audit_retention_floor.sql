-- The youngest audit rows _purge_audit may ever delete are older than this, whatever its caller says:
-- the owner's RETAIN_AUDIT, which `intake-sync migrate` (or `run` with MIGRATE_ON_START) records in
-- owner_settings from the owner's environment, never under one day; 6 years (the documented default)
-- until it has; null for `forever` (nothing is ever deleted). Only the owner writes owner_settings, so
-- the daemon's role cannot lower it (docs/security.md, "Audit trail").
CREATE OR REPLACE FUNCTION "intake_sync"."_audit_retention_floor"() RETURNS interval
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  configured text;
BEGIN
  SELECT o."value" INTO configured FROM "intake_sync"."owner_settings" o WHERE o."name" = 'retain_audit_ms';
  IF configured IS NULL THEN
    RETURN interval '6 years';
  END IF;
  IF configured = 'forever' THEN
    RETURN NULL;
  END IF;
  IF configured !~ '^[0-9]{1,15}$' THEN
    RAISE EXCEPTION 'owner_settings.retain_audit_ms: must be a whole number of milliseconds or forever (run intake-sync migrate as the owner)'
      USING ERRCODE = '22023';
  END IF;
  RETURN GREATEST(interval '1 day', configured::bigint * interval '1 millisecond');
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_audit_retention_floor"() FROM PUBLIC;

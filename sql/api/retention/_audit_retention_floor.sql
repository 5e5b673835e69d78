-- The youngest audit rows the cleaner may ever delete are older than this, whatever RETAIN_AUDIT or a
-- caller of _purge_audit says: the daemon's role cannot empty the trail of recent actions. An owner who
-- wants a stronger floor replaces this function (docs/security.md, "Retention").
CREATE OR REPLACE FUNCTION "intake_sync"."_audit_retention_floor"() RETURNS interval
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT interval '1 day'
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_audit_retention_floor"() FROM PUBLIC;

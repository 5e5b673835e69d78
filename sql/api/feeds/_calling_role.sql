-- Who is calling, as the docs define it (see the head of this file).
CREATE OR REPLACE FUNCTION "intake_sync"."_calling_role"() RETURNS name
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT CASE WHEN pg_catalog.current_setting('role') = 'none' THEN session_user
    ELSE pg_catalog.current_setting('role')::name END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_calling_role"() FROM PUBLIC;

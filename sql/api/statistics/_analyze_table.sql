-- _analyze_table(table_name): ANALYZE one table of the schema, for the daemon's statistics task
-- (src/sync/statistics/). Only the owner (or, from PostgreSQL 17, a role with MAINTAIN) may ANALYZE a
-- table; the runtime role gets this SECURITY DEFINER function instead, which analyzes nothing but a
-- plain table of this schema named exactly (no other schema, no view, no expression). The columns the
-- views read get no statistics (_view_columns_without_statistics).
CREATE OR REPLACE FUNCTION "intake_sync"."_analyze_table"(table_name text)
RETURNS void
LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
  IF table_name IS NULL THEN
    RAISE EXCEPTION 'table_name: required' USING ERRCODE = '23502';
  END IF;
  IF pg_catalog.length(table_name) > 63 OR NOT EXISTS (
    SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace s ON s.oid = c.relnamespace
    WHERE s.nspname = 'intake_sync' AND c.relname = table_name AND c.relkind IN ('r', 'p')
  ) THEN
    RAISE EXCEPTION 'table_name: not a table of the schema' USING ERRCODE = '22023';
  END IF;
  -- never statistics on a column a view reads (issue 33 §4), a view added since included
  PERFORM "intake_sync"."_view_columns_without_statistics"(table_name);
  EXECUTE pg_catalog.format('ANALYZE %I.%I', 'intake_sync', table_name);
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_analyze_table"(text) FROM PUBLIC;

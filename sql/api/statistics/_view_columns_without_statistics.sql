-- _view_columns_without_statistics(table_name): no planner statistics on any column a view of the
-- schema reads (issue 33 §4). A barrier view still lets leakproof operators (=, <, >=) down to the
-- table, where EXPLAIN estimated them from whole-table statistics: as an app role of one feed,
-- `feed = 'clinic_b'` got 2,014 rows where an unknown feed got 1, and external_id ranges recovered
-- another feed's prefixes. The plans are pinned without statistics (the *plan* tests under test/),
-- so none is kept: SET STATISTICS 0 on those columns (ANALYZE skips them and keeps counting rows,
-- the same for every value), and from PostgreSQL 18 what an earlier ANALYZE left is cleared
-- (pg_clear_attribute_stats; before 18 only a superuser can: docs/security.md). table_name null:
-- every table. Returns how many columns it changed.
-- Run by this file when `migrate` applies it (below; last in the manifest, after every view) and by
-- _analyze_table before each ANALYZE, so a view added later is covered at the next statistics pass.
-- SECURITY DEFINER: only the owner may alter its tables; not granted to anyone.
CREATE OR REPLACE FUNCTION "intake_sync"."_view_columns_without_statistics"(table_name text)
RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
  col record;
  changed integer := 0;
BEGIN
  FOR col IN
    SELECT DISTINCT t.relname AS t_name, a.attname AS a_name, COALESCE(a.attstattarget, -1) <> 0 AS collecting
    FROM pg_catalog.pg_class v
    JOIN pg_catalog.pg_namespace n ON n.oid = v.relnamespace AND n.nspname = 'intake_sync'
    JOIN pg_catalog.pg_rewrite r ON r.ev_class = v.oid
    JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::regclass AND d.objid = r.oid
      AND d.refclassid = 'pg_catalog.pg_class'::regclass AND d.refobjsubid > 0
    JOIN pg_catalog.pg_class t ON t.oid = d.refobjid AND t.relkind IN ('r', 'p') AND t.relnamespace = n.oid
    JOIN pg_catalog.pg_attribute a ON a.attrelid = t.oid AND a.attnum = d.refobjsubid AND NOT a.attisdropped
    WHERE v.relkind = 'v' AND (_view_columns_without_statistics.table_name IS NULL OR t.relname = _view_columns_without_statistics.table_name)
    ORDER BY 1, 2
  LOOP
    IF col.collecting THEN
      EXECUTE pg_catalog.format('ALTER TABLE %I.%I ALTER COLUMN %I SET STATISTICS 0', 'intake_sync', col.t_name, col.a_name);
      changed := changed + 1;
    END IF;
    IF pg_catalog.current_setting('server_version_num')::integer >= 180000 AND EXISTS (
      SELECT 1 FROM pg_catalog.pg_stats s WHERE s.schemaname = 'intake_sync' AND s.tablename = col.t_name AND s.attname = col.a_name
    ) THEN
      EXECUTE 'SELECT pg_catalog.pg_clear_attribute_stats($1, $2, $3, false)' USING 'intake_sync', col.t_name::text, col.a_name::text;
    END IF;
  END LOOP;
  RETURN changed;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_view_columns_without_statistics"(text) FROM PUBLIC;

SELECT "intake_sync"."_view_columns_without_statistics"(NULL);

-- Deletes at most max_rows audit rows of one feed (null: the rows no feed owns) older than `before`,
-- and never one younger than _audit_retention_floor() (the owner's RETAIN_AUDIT): a caller asking for
-- a later `before` gets the floor. The only way any role but the owner removes audit rows; each call
-- that deleted rows writes `audit.purge` (class, the cutoff applied, the count). dry_run: counts instead.
-- `forever` (a null floor): deletes nothing.
CREATE OR REPLACE FUNCTION "intake_sync"."_purge_audit"(feed text, "before" timestamptz, max_rows integer, dry_run boolean DEFAULT false) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
-- planned right with or without statistics (issue 26): each batch walks audit_entries_feed_at_idx in
-- `at` order up to the limit (the feed's rows, or the rows no feed owns: `feed IS NULL` is an index
-- condition too, where `IS NOT DISTINCT FROM` was a filter over a scan and sort of the whole table)
SET plan_cache_mode = force_custom_plan
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET enable_sort = off
AS $$
#variable_conflict use_variable
DECLARE
  given_feed text := feed;
  floor_age interval;
  effective timestamptz;
  done bigint := 0;
BEGIN
  IF given_feed IS NOT NULL AND given_feed !~ '^[a-z0-9_-]{1,64}$' THEN
    RAISE EXCEPTION 'feed: must be 1-64 of a-z 0-9 _ -' USING ERRCODE = '22023', COLUMN = 'feed';
  END IF;
  IF "before" IS NULL THEN
    RAISE EXCEPTION 'before: required' USING ERRCODE = '23502', COLUMN = 'before';
  END IF;
  IF max_rows IS NULL OR max_rows < 1 OR max_rows > 100000 THEN
    RAISE EXCEPTION 'max_rows: must be between 1 and 100000' USING ERRCODE = '22023', COLUMN = 'max_rows';
  END IF;
  floor_age := "intake_sync"."_audit_retention_floor"();
  IF floor_age IS NULL THEN
    RETURN 0;
  END IF;
  effective := LEAST("before", pg_catalog.now() - floor_age);
  IF dry_run THEN
    IF given_feed IS NULL THEN
      SELECT pg_catalog.count(*) INTO done FROM "intake_sync"."audit_entries" a WHERE a.feed IS NULL AND a."at" < effective;
    ELSE
      SELECT pg_catalog.count(*) INTO done FROM "intake_sync"."audit_entries" a WHERE a.feed = given_feed AND a."at" < effective;
    END IF;
    RETURN done;
  END IF;
  IF given_feed IS NULL THEN
    WITH picked AS (
      SELECT a.id FROM "intake_sync"."audit_entries" a
      WHERE a.feed IS NULL AND a."at" < effective
      ORDER BY a.feed, a."at" LIMIT max_rows FOR UPDATE SKIP LOCKED
    ),
    gone AS (DELETE FROM "intake_sync"."audit_entries" a USING picked WHERE a.id = picked.id RETURNING 1)
    SELECT pg_catalog.count(*) INTO done FROM gone;
  ELSE
    WITH picked AS (
      SELECT a.id FROM "intake_sync"."audit_entries" a
      WHERE a.feed = given_feed AND a."at" < effective
      ORDER BY a.feed, a."at" LIMIT max_rows FOR UPDATE SKIP LOCKED
    ),
    gone AS (DELETE FROM "intake_sync"."audit_entries" a USING picked WHERE a.id = picked.id RETURNING 1)
    SELECT pg_catalog.count(*) INTO done FROM gone;
  END IF;
  IF done > 0 THEN
    PERFORM "intake_sync"."_audit_entry"('audit.purge', given_feed, NULL,
      pg_catalog.jsonb_build_object('class', 'audit', 'cutoff', effective, 'count', done, 'requested_before', "before"));
  END IF;
  RETURN done;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_purge_audit"(text, timestamptz, integer, boolean) FROM PUBLIC;

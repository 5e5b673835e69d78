-- The console's Overdue page (docs/sql-api/overdue.md): the caller's overdue prescriptions, oldest
-- first, at most max_rows, of one feed and one stage when given. The same rows as
-- overdue_prescriptions, but ordered and cut INSIDE: a query on that view (a security_barrier view with
-- a join, never merged into the query around it) read, joined and sorted every overdue prescription
-- (175k at bench:console's size, 270-559 ms p95 under load, issue 34 §6). Here each (feed, stage)
-- deadline gives at most max_rows by one index range (_overdue_oldest), and only those are sorted.
-- SECURITY DEFINER (the app role reads no table), filtered by the caller's feeds (_visible_feeds) before
-- anything is read; identifiers, stages and times only, never patient data.
CREATE OR REPLACE FUNCTION "intake_sync"."overdue_page"(in_feed text DEFAULT NULL, in_stage text DEFAULT NULL, max_rows integer DEFAULT 200)
RETURNS TABLE (feed text, external_id text, stage text, since timestamptz, overdue_by interval)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
-- each stage's range is already in order: with no statistics the planner guessed a few rows and
-- sorted the whole range instead of walking the index and stopping
SET enable_sort = off AS $$
DECLARE
  visible text[] := "intake_sync"."_visible_feeds"();
BEGIN
  IF overdue_page.max_rows IS NULL OR overdue_page.max_rows < 1 OR overdue_page.max_rows > 1000 THEN
    RAISE EXCEPTION 'max_rows: from 1 to 1000' USING ERRCODE = '22023', COLUMN = 'max_rows';
  END IF;
  RETURN QUERY
    SELECT s.feed, s.external_id, s.stage, s.since, (pg_catalog.now() - s.since - d.deadline)
    FROM "intake_sync"."feed_deadlines" d
    CROSS JOIN LATERAL "intake_sync"."_overdue_oldest"(d.feed, d.stage, d.deadline, overdue_page.max_rows) s
    WHERE d.deadline IS NOT NULL AND (visible IS NULL OR d.feed = ANY (visible))
      AND (overdue_page.in_feed IS NULL OR d.feed = overdue_page.in_feed)
      AND (overdue_page.in_stage IS NULL OR d.stage = overdue_page.in_stage)
    ORDER BY s.since, s.feed, s.external_id
    LIMIT overdue_page.max_rows;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."overdue_page"(text, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."overdue_page"(text, text, integer) IS 'the caller''s overdue prescriptions, oldest first, at most max_rows (of a feed and a stage when given): overdue_prescriptions'' rows, each stage one index range; no PHI (docs/sql-api/overdue.md)';

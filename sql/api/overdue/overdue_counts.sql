-- How many prescriptions are overdue per feed and stage, for the console's Feeds page
-- (docs/sql-api/overdue.md), each counted up to at_most + 1: a count of at_most + 1 reads "more than
-- at_most". Counting every one read all of overdue_prescriptions' rows (175k at bench:console's size,
-- issue 34 §6); this reads at most at_most + 1 by each (feed, stage)'s index range (_overdue_oldest),
-- so the page's cost does not grow with the backlog. The metric intake_sync_prescriptions_overdue
-- still counts them all (docs/operations.md). SECURITY DEFINER (the app role reads no table),
-- filtered by the caller's feeds (_visible_feeds); a (feed, stage) with none overdue has no row.
CREATE OR REPLACE FUNCTION "intake_sync"."overdue_counts"(at_most integer DEFAULT 1000)
RETURNS TABLE (feed text, stage text, n integer)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
-- each range is walked in its order and stopped (see overdue_page)
SET enable_sort = off AS $$
DECLARE
  visible text[] := "intake_sync"."_visible_feeds"();
BEGIN
  IF overdue_counts.at_most IS NULL OR overdue_counts.at_most < 1 OR overdue_counts.at_most > 100000 THEN
    RAISE EXCEPTION 'at_most: from 1 to 100000' USING ERRCODE = '22023', COLUMN = 'at_most';
  END IF;
  RETURN QUERY
    SELECT d.feed, d.stage, c.n
    FROM "intake_sync"."feed_deadlines" d
    CROSS JOIN LATERAL (SELECT pg_catalog.count(*)::integer AS n
      FROM "intake_sync"."_overdue_oldest"(d.feed, d.stage, d.deadline, overdue_counts.at_most + 1)) c
    WHERE d.deadline IS NOT NULL AND (visible IS NULL OR d.feed = ANY (visible)) AND c.n > 0;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."overdue_counts"(integer) FROM PUBLIC;

COMMENT ON FUNCTION "intake_sync"."overdue_counts"(integer) IS 'per visible feed and stage, how many prescriptions are overdue, each counted up to at_most + 1 (more than at_most); no PHI (docs/sql-api/overdue.md)';

-- Records a completed pass of the cleaner or of `intake-sync purge` (retention_runs) and, when it
-- removed anything (or always_audit: a pass an operator ran), the audit row `purge.run` with the
-- counts by class, in the caller's transaction.
CREATE OR REPLACE FUNCTION "intake_sync"."_purge_ran"(feed text, counts jsonb, on_behalf_of text DEFAULT NULL, always_audit boolean DEFAULT false) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
  given_feed text := feed;
  total numeric;
BEGIN
  PERFORM "intake_sync"."_purge_check"('events', given_feed, pg_catalog.now(), 1);
  IF counts IS NULL OR pg_catalog.jsonb_typeof(counts) <> 'object' THEN
    RAISE EXCEPTION 'counts: must be a json object' USING ERRCODE = '22023', COLUMN = 'counts';
  END IF;
  IF pg_catalog.octet_length(counts::text) > 2048 THEN
    RAISE EXCEPTION 'counts: must be at most 2048 bytes of json' USING ERRCODE = '22023', COLUMN = 'counts';
  END IF;
  INSERT INTO "intake_sync"."retention_runs" AS r ("feed", "last_run_at", "last_counts")
  VALUES (given_feed, pg_catalog.now(), counts)
  ON CONFLICT ON CONSTRAINT "retention_runs_pkey" DO UPDATE SET last_run_at = excluded.last_run_at, last_counts = excluded.last_counts;
  SELECT COALESCE(pg_catalog.sum(CASE WHEN pg_catalog.jsonb_typeof(v) = 'number' THEN v::text::numeric ELSE 0 END), 0)
  INTO total FROM pg_catalog.jsonb_each(counts) AS c(k, v);
  IF total > 0 OR always_audit THEN
    PERFORM "intake_sync"."_audit"('purge.run', given_feed, NULL, counts, on_behalf_of);
  END IF;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_purge_ran"(text, jsonb, text, boolean) FROM PUBLIC;

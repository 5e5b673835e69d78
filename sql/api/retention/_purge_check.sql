-- The classes a pass purges, in the order it runs them (src/sync/retention/retention-classes.ts).
CREATE OR REPLACE FUNCTION "intake_sync"."_purge_check"(class text, feed text, cutoff timestamptz, max_rows integer) RETURNS void
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF class IS NULL THEN
    RAISE EXCEPTION 'class: required' USING ERRCODE = '23502', COLUMN = 'class';
  END IF;
  IF class NOT IN ('open_findings', 'quarantine', 'event_bodies', 'events', 'outbox_bodies', 'status_changes') THEN
    RAISE EXCEPTION 'class: must be one of open_findings, quarantine, event_bodies, events, outbox_bodies, status_changes' USING ERRCODE = '22023', COLUMN = 'class';
  END IF;
  IF feed IS NULL THEN
    RAISE EXCEPTION 'feed: required' USING ERRCODE = '23502', COLUMN = 'feed';
  END IF;
  IF feed !~ '^[a-z0-9_-]{1,64}$' THEN
    RAISE EXCEPTION 'feed: must be 1-64 of a-z 0-9 _ -' USING ERRCODE = '22023', COLUMN = 'feed';
  END IF;
  IF cutoff IS NULL THEN
    RAISE EXCEPTION 'cutoff: required' USING ERRCODE = '23502', COLUMN = 'cutoff';
  END IF;
  IF max_rows IS NULL OR max_rows < 1 OR max_rows > 100000 THEN
    RAISE EXCEPTION 'max_rows: must be between 1 and 100000' USING ERRCODE = '22023', COLUMN = 'max_rows';
  END IF;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_purge_check"(text, text, timestamptz, integer) FROM PUBLIC;

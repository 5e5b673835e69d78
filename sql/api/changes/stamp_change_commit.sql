-- Runs at COMMIT (deferred), once per writing transaction: stamps the commit in the clock of each
-- feed it changed (_stamp_change_feeds; issue 33: per feed, no lock another feed's commits wait on).
-- Issue 33 §2: no commit depends on the notification queue, so the commit sends no NOTIFY. A login
-- that LISTENs in a transaction left open pins the cluster's queue, and once it is full PostgreSQL
-- refuses at COMMIT every transaction that notifies; pg_notification_queue_usage() cannot guard it
-- (the queue stays full, for PostgreSQL, until a listener truncates it, while the usage reads 0).
-- The daemon sends the wake-up after a page committed, in a statement of its own whose failure
-- costs nothing (src/db/status-wakeup.ts); followers read at least every poll interval anyway.
CREATE OR REPLACE FUNCTION "intake_sync"."stamp_change_commit"() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
BEGIN
  PERFORM "intake_sync"."_stamp_change_feeds"(NEW.xid);
  UPDATE "intake_sync"."change_commits" SET committed_at = pg_catalog.clock_timestamp() WHERE xid = NEW.xid;
  RETURN NULL;
END $$;

REVOKE ALL ON FUNCTION "intake_sync"."stamp_change_commit"() FROM PUBLIC;

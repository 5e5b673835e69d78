-- Runs at COMMIT (deferred), once per writing transaction. The EXCLUSIVE lock on change_clock is
-- taken here and released only after the transaction has become visible to others, so the next
-- writer draws its commit_seq after this one is visible: commit_seq order is commit order, and the
-- committed seqs any snapshot sees have no later-committing gap below them.
-- Issue 25 §6 and §7: record the feeds of the commit (the per-feed walk of status_changes_since),
-- and notify with an empty payload: the one channel any role may LISTEN on carries nothing about
-- any feed (it carried the global commit_seq and the commit's change count).
CREATE OR REPLACE FUNCTION "intake_sync"."stamp_change_commit"() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
  seq bigint;
BEGIN
  LOCK TABLE "intake_sync"."change_clock" IN EXCLUSIVE MODE;
  seq := nextval('"intake_sync"."change_commit_seq"'::regclass);
  UPDATE "intake_sync"."change_commits" SET commit_seq = seq, committed_at = clock_timestamp() WHERE xid = NEW.xid;
  INSERT INTO "intake_sync"."change_commit_feeds" ("feed", "commit_seq", "xid")
  SELECT DISTINCT s.feed, seq, NEW.xid FROM "intake_sync"."status_changes" s WHERE s.xid = NEW.xid;
  -- delivered at commit, to listeners only, as a wake-up: it names nothing (no feed, no sequence,
  -- no count). A channel is at most 63 bytes and pg_notify() raises on a longer one, which would
  -- fail every commit: a schema name is cut to 56 (statusChannel() in src/api/status-channel.ts)
  PERFORM pg_notify(left('intake_sync', 56) || '_status', '');
  RETURN NULL;
END $$;

REVOKE ALL ON FUNCTION "intake_sync"."stamp_change_commit"() FROM PUBLIC;

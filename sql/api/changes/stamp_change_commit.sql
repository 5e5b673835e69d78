-- Runs at COMMIT (deferred), once per writing transaction. The EXCLUSIVE lock on change_clock is
-- taken here and released only after the transaction has become visible to others, so the next
-- writer draws its commit_seq after this one is visible: commit_seq order is commit order, and the
-- committed seqs any snapshot sees have no later-committing gap below them.
CREATE OR REPLACE FUNCTION "intake_sync"."stamp_change_commit"() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  seq bigint;
  changes bigint;
BEGIN
  LOCK TABLE "intake_sync"."change_clock" IN EXCLUSIVE MODE;
  seq := nextval('"intake_sync"."change_commit_seq"'::regclass);
  UPDATE "intake_sync"."change_commits" SET commit_seq = seq, committed_at = clock_timestamp() WHERE xid = NEW.xid;
  SELECT count(*) INTO changes FROM "intake_sync"."status_changes" WHERE xid = NEW.xid;
  -- delivered at commit, to listeners only; it names nothing but the commit (no PHI). A channel is
  -- at most 63 bytes and pg_notify() raises on a longer one, which would fail every commit: a
  -- schema name is cut to 56 (statusChannel() in src/sync/status-channel.ts does the same)
  PERFORM pg_notify(left('intake_sync', 56) || '_status', json_build_object('commit_seq', seq, 'changes', changes)::text);
  RETURN NULL;
END $$;

REVOKE ALL ON FUNCTION "intake_sync"."stamp_change_commit"() FROM PUBLIC;

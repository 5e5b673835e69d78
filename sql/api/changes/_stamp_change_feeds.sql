-- Stamps the commit `x` in the clock of every feed it changed that it is not yet stamped in, in feed
-- order (two commits of the same feeds take their clocks in one order, never in a circle): the
-- feed's change_clocks row is locked (_change_clock) and the feed's commit_seq drawn from its
-- sequence; that row lock, held to the end of the commit, orders the feed's commits. The lock is released only after the commit became visible, so the next commit
-- of the feed draws its commit_seq after this one is visible: a feed's commit_seq order is its commit
-- order, and the seqs any snapshot sees have no later-committing gap below them (a rolled-back
-- commit leaves a hole, harmless: readers rely on the order). Only that feed's commits ever wait on the row (issue 33; it was
-- one EXCLUSIVE table lock every feed's commits waited on, which any session could hold through
-- SET CONSTRAINTS ALL IMMEDIATE). The wait is bounded and a timeout names the clock and its holder.
-- Called at COMMIT by stamp_change_commit, and again by the change triggers when a transaction
-- changes a status after its commit was stamped early (SET CONSTRAINTS ALL IMMEDIATE).
CREATE OR REPLACE FUNCTION "intake_sync"."_stamp_change_feeds"(x xid8) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  changed text;
  seq bigint;
BEGIN
  FOR changed IN
    SELECT DISTINCT s.feed FROM "intake_sync"."status_changes" s
    WHERE s.xid = x
      AND NOT EXISTS (SELECT 1 FROM "intake_sync"."change_commit_feeds" cf WHERE cf.xid = x AND cf.feed = s.feed)
    ORDER BY s.feed
  LOOP
    seq := pg_catalog.nextval("intake_sync"."_change_clock"(changed));
    -- taken under the clock row: a feed's committed_at grows with its commit_seq (retention's cutoff)
    INSERT INTO "intake_sync"."change_commit_feeds" ("feed", "commit_seq", "xid", "committed_at")
    VALUES (changed, seq, x, pg_catalog.clock_timestamp());
    seq := NULL;
  END LOOP;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_stamp_change_feeds"(xid8) FROM PUBLIC;

-- Locks the commit clock of one feed until the transaction ends (its change_clocks row, FOR UPDATE)
-- and returns the feed's sequence, creating row and sequence on the feed's first commit. The row is
-- never updated, so a writer at REPEATABLE READ locks it whatever committed since its snapshot, and
-- nextval() ignores snapshots. The sequence is created under the row lock (one creator per feed) and
-- starts above change_commit_seq, the global clock frozen at 0030. Its name is a hash of the feed
-- (feed names are up to 64 characters, identifiers 63).
-- Waits at most lock_timeout (10 s when the session has none, _lock_wait_bound), then raises 55P03
-- naming the clock and its holder (_lock_holder, from pg_locks). Only this feed's commits ever wait on the row (issue 33).
CREATE OR REPLACE FUNCTION "intake_sync"."_change_clock"(feed text) RETURNS regclass
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  own_timeout text := "intake_sync"."_lock_wait_bound"();
  seq_name text := 'change_clock_' || pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(_change_clock.feed, 'UTF8')), 'hex'), 48);
  seq regclass;
  locker xid;
  deadline timestamptz;
BEGIN
  -- SKIP LOCKED first, so the transaction's own id locks the row (the id pg_locks lists); when another
  -- commit of the feed holds it, wait in a subtransaction that can catch the timeout and name the
  -- holder, let that lock go, and take it again (as _feed_lock)
  -- Each turn waits for a real release, and one of the waiters it wakes wins the row: under
  -- contention a commit may lose several turns, so the bound is lock_timeout's time, not a count
  deadline := pg_catalog.clock_timestamp() + pg_catalog.current_setting('lock_timeout')::interval;
  LOOP
    PERFORM 1 FROM "intake_sync"."change_clocks" c WHERE c.feed = _change_clock.feed FOR UPDATE SKIP LOCKED;
    EXIT WHEN FOUND;
    IF pg_catalog.clock_timestamp() > deadline THEN
      SELECT c.xmax INTO locker FROM "intake_sync"."change_clocks" c WHERE c.feed = _change_clock.feed;
      RAISE EXCEPTION 'lock wait: the change clock of feed % (change_clocks), held by %, for longer than lock_timeout (%)',
        _change_clock.feed, "intake_sync"."_lock_holder"(locker), pg_catalog.current_setting('lock_timeout')
        USING ERRCODE = '55P03',
          HINT = 'other transactions of this feed kept taking it: end the long ones, or see docs/runbook.md';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM "intake_sync"."change_clocks" c WHERE c.feed = _change_clock.feed) THEN
      -- the feed's first commit: a concurrent first commit waits here for the other's commit
      INSERT INTO "intake_sync"."change_clocks" ("feed") VALUES (_change_clock.feed) ON CONFLICT DO NOTHING;
      CONTINUE;
    END IF;
    BEGIN
      PERFORM 1 FROM "intake_sync"."change_clocks" c WHERE c.feed = _change_clock.feed FOR UPDATE;
      RAISE EXCEPTION USING ERRCODE = 'IS001';
    EXCEPTION
      WHEN SQLSTATE 'IS001' THEN
        NULL;
      WHEN lock_not_available THEN
        SELECT c.xmax INTO locker FROM "intake_sync"."change_clocks" c WHERE c.feed = _change_clock.feed;
        RAISE EXCEPTION 'lock wait: the change clock of feed % (change_clocks), held by %, for longer than lock_timeout (%)',
          _change_clock.feed, "intake_sync"."_lock_holder"(locker), pg_catalog.current_setting('lock_timeout')
          USING ERRCODE = '55P03',
            HINT = 'another transaction of this feed changed a status and is still open: end it, or see docs/runbook.md';
    END;
  END LOOP;
  PERFORM pg_catalog.set_config('lock_timeout', own_timeout, true);
  seq := pg_catalog.to_regclass(pg_catalog.format('%I.%I', 'intake_sync', seq_name));
  IF seq IS NULL THEN
    EXECUTE pg_catalog.format('CREATE SEQUENCE %I.%I AS bigint START WITH %s CACHE 1', 'intake_sync', seq_name,
      (SELECT CASE WHEN q.is_called THEN q.last_value ELSE 0 END FROM "intake_sync"."change_commit_seq" q) + 1);
    seq := pg_catalog.to_regclass(pg_catalog.format('%I.%I', 'intake_sync', seq_name));
  END IF;
  RETURN seq;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_change_clock"(text) FROM PUBLIC;

-- Takes a feed's lock row until the transaction ends: FOR UPDATE (exclusive) or FOR SHARE. The row is
-- created on first use. A null feed (exclusive only) takes the lock of every feed, in feed order, as
-- the rematch of every feed does (the runtime role only: rematch_held is not granted to applications).
-- Runs as the owner: the runtime role's statements call it, and the SQL API's SECURITY DEFINER
-- functions call it for app roles, after their feed check, which cannot call it themselves (an app
-- role could otherwise hold another feed's lock).
-- Issue 33: a wait is bounded by lock_timeout (10 s when the session has none, _lock_wait_bound) and a
-- timeout raises 55P03 naming the lock and its holder (pid, role, application_name from pg_locks,
-- _lock_holder). The lock is taken with SKIP LOCKED, so the transaction's own id is the row's locker
-- (the id pg_locks lists); only when the row is held in a conflicting mode does it wait, in a
-- subtransaction that can catch the timeout and lets the lock go at once (pg_locks does not list a
-- subtransaction's id once it ends), then take it again.
CREATE OR REPLACE FUNCTION "intake_sync"."_feed_lock"(feed text, lock text, exclusive boolean) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  own_timeout text;
  locker xid;
  deadline timestamptz;
BEGIN
  IF _feed_lock.lock IS NULL OR _feed_lock.exclusive IS NULL OR (_feed_lock.feed IS NULL AND NOT _feed_lock.exclusive) THEN
    RAISE EXCEPTION '_feed_lock: lock and exclusive are required, and a null feed (every feed) only exclusively'
      USING ERRCODE = '22004';
  END IF;
  own_timeout := "intake_sync"."_lock_wait_bound"();
  IF _feed_lock.feed IS NULL THEN
    PERFORM 1 FROM "intake_sync"."feed_locks" l WHERE l."lock" = _feed_lock.lock ORDER BY l."feed" FOR UPDATE;
    PERFORM pg_catalog.set_config('lock_timeout', own_timeout, true);
    RETURN;
  END IF;
  -- Each turn waits for a real release, and one of the waiters it wakes wins the row: under
  -- contention a transaction may lose several turns, so the bound is lock_timeout's time, not a count
  deadline := pg_catalog.clock_timestamp() + pg_catalog.current_setting('lock_timeout')::interval;
  LOOP
    IF pg_catalog.clock_timestamp() > deadline THEN
      SELECT l.xmax INTO locker FROM "intake_sync"."feed_locks" l WHERE l."feed" = _feed_lock.feed AND l."lock" = _feed_lock.lock;
      RAISE EXCEPTION 'lock wait: the % lock of feed % (feed_locks), held by %, for longer than lock_timeout (%)',
        _feed_lock.lock, _feed_lock.feed, "intake_sync"."_lock_holder"(locker), pg_catalog.current_setting('lock_timeout')
        USING ERRCODE = '55P03',
          HINT = 'transactions of this feed kept taking it (an application''s, or registrations and rematches): end the long ones, or see docs/runbook.md';
    END IF;
    IF _feed_lock.exclusive THEN
      PERFORM 1 FROM "intake_sync"."feed_locks" l WHERE l."feed" = _feed_lock.feed AND l."lock" = _feed_lock.lock FOR UPDATE SKIP LOCKED;
    ELSE
      PERFORM 1 FROM "intake_sync"."feed_locks" l WHERE l."feed" = _feed_lock.feed AND l."lock" = _feed_lock.lock FOR SHARE SKIP LOCKED;
    END IF;
    IF FOUND THEN
      PERFORM pg_catalog.set_config('lock_timeout', own_timeout, true);
      RETURN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM "intake_sync"."feed_locks" l WHERE l."feed" = _feed_lock.feed AND l."lock" = _feed_lock.lock) THEN
      -- first use of this feed's lock: a concurrent first use waits here for the other's commit
      BEGIN
        INSERT INTO "intake_sync"."feed_locks" ("feed", "lock") VALUES (_feed_lock.feed, _feed_lock.lock) ON CONFLICT DO NOTHING;
      EXCEPTION WHEN lock_not_available THEN
        RAISE EXCEPTION 'lock wait: the % lock of feed % (feed_locks), being created by another transaction still open (its first use; pg_locks showed it as the transactionid waited on), for longer than lock_timeout (%)',
          _feed_lock.lock, _feed_lock.feed, pg_catalog.current_setting('lock_timeout') USING ERRCODE = '55P03';
      END;
      CONTINUE;
    END IF;
    -- held in a conflicting mode: wait until it is free (or lock_timeout), then take it above
    BEGIN
      IF _feed_lock.exclusive THEN
        PERFORM 1 FROM "intake_sync"."feed_locks" l WHERE l."feed" = _feed_lock.feed AND l."lock" = _feed_lock.lock FOR UPDATE;
      ELSE
        PERFORM 1 FROM "intake_sync"."feed_locks" l WHERE l."feed" = _feed_lock.feed AND l."lock" = _feed_lock.lock FOR SHARE;
      END IF;
      RAISE EXCEPTION USING ERRCODE = 'IS001';
    EXCEPTION
      WHEN SQLSTATE 'IS001' THEN
        NULL;
      WHEN lock_not_available THEN
        SELECT l.xmax INTO locker FROM "intake_sync"."feed_locks" l WHERE l."feed" = _feed_lock.feed AND l."lock" = _feed_lock.lock;
        RAISE EXCEPTION 'lock wait: the % lock of feed % (feed_locks), held by %, for longer than lock_timeout (%)',
          _feed_lock.lock, _feed_lock.feed, "intake_sync"."_lock_holder"(locker), pg_catalog.current_setting('lock_timeout')
          USING ERRCODE = '55P03',
            HINT = 'the holder is a transaction of this feed left open (an application''s, or a registration or rematch): end it, or see docs/runbook.md';
    END;
  END LOOP;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_feed_lock"(text, text, boolean) FROM PUBLIC;

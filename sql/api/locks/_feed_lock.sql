-- Takes a feed's lock row until the transaction ends: FOR UPDATE (exclusive) or FOR SHARE. The row is
-- created on first use. A null feed (exclusive only) takes the lock of every feed, in feed order, as
-- the rematch of every feed does. Runs as the owner: the runtime role's statements call it, and the
-- SQL API's SECURITY DEFINER functions call it for app roles, which cannot call it themselves (an app
-- role could otherwise hold another feed's lock). Waits at most lock_timeout, then 55P03.
CREATE OR REPLACE FUNCTION "intake_sync"."_feed_lock"(feed text, lock text, exclusive boolean) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF _feed_lock.lock IS NULL OR _feed_lock.exclusive IS NULL OR (_feed_lock.feed IS NULL AND NOT _feed_lock.exclusive) THEN
    RAISE EXCEPTION '_feed_lock: lock and exclusive are required, and a null feed (every feed) only exclusively'
      USING ERRCODE = '22004';
  END IF;
  IF _feed_lock.feed IS NULL THEN
    PERFORM 1 FROM "intake_sync"."feed_locks" l WHERE l."lock" = _feed_lock.lock ORDER BY l."feed" FOR UPDATE;
    RETURN;
  END IF;
  FOR attempt IN 1..2 LOOP
    IF _feed_lock.exclusive THEN
      PERFORM 1 FROM "intake_sync"."feed_locks" l WHERE l."feed" = _feed_lock.feed AND l."lock" = _feed_lock.lock FOR UPDATE;
    ELSE
      PERFORM 1 FROM "intake_sync"."feed_locks" l WHERE l."feed" = _feed_lock.feed AND l."lock" = _feed_lock.lock FOR SHARE;
    END IF;
    IF FOUND THEN
      RETURN;
    END IF;
    -- first use of this feed's lock: a concurrent first use waits here for the other's commit
    INSERT INTO "intake_sync"."feed_locks" ("feed", "lock") VALUES (_feed_lock.feed, _feed_lock.lock) ON CONFLICT DO NOTHING;
  END LOOP;
  RAISE EXCEPTION '_feed_lock: the % lock row of feed "%" could not be taken', _feed_lock.lock, _feed_lock.feed USING ERRCODE = '55000';
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_feed_lock"(text, text, boolean) FROM PUBLIC;

-- The lock_timeout a wait of the SQL API's locks runs under: the session's own, or when it has none
-- (0, the server default) the daemon's default DB_LOCK_TIMEOUT_MS, 10 s. An application's commit
-- waiting on its own feed's clock or match lock, held by another transaction of that feed left open,
-- then fails naming the lock and the holder instead of waiting without end (issue 33). Returns the
-- setting to restore once the lock is held.
CREATE OR REPLACE FUNCTION "intake_sync"."_lock_wait_bound"() RETURNS text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  own text := pg_catalog.current_setting('lock_timeout');
BEGIN
  IF own = '0' THEN
    PERFORM pg_catalog.set_config('lock_timeout', '10s', true);
  END IF;
  RETURN own;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_lock_wait_bound"() FROM PUBLIC;

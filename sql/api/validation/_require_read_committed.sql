-- The match lock orders registrations after the page applies already running, and a registration
-- sees their events only if its snapshot is taken after it got the lock. Under REPEATABLE READ or
-- SERIALIZABLE the snapshot is the transaction's first one, older than the lock: events of a page
-- committed in between would stay held with their prescription registered. Refused, not risked.
CREATE OR REPLACE FUNCTION "intake_sync"."_require_read_committed"(caller text) RETURNS void
LANGUAGE plpgsql STABLE
AS $$
BEGIN
  IF pg_catalog.current_setting('transaction_isolation') NOT IN ('read committed', 'read uncommitted') THEN
    RAISE EXCEPTION '%: needs a READ COMMITTED transaction, not %', caller, pg_catalog.upper(pg_catalog.current_setting('transaction_isolation'))
      USING ERRCODE = '25000',
        HINT = 'its snapshot must be taken after it holds the match lock, or events applied meanwhile would stay held; call it in a READ COMMITTED transaction';
  END IF;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_require_read_committed"(text) FROM PUBLIC;

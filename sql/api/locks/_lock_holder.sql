-- Who holds a row lock, read from pg_locks: `locker` is the locked row's xmax, the transaction id
-- whose lock its holder keeps in pg_locks until it ends, or a multixact of share lockers. The SQL
-- API's locks are taken at the top level of the transaction (_feed_lock, _change_clock); a lock
-- taken inside a caller's savepoint is known by its subtransaction id, which pg_locks lists no more
-- once the savepoint is released: then the holder is said to be unknown, not guessed. Called after a lock wait ran out (lock_timeout), so the error names the backend really
-- waited on (pid, role, application_name), never a guess; a holder gone since is said so.
-- application_name is the client's own text: cut to 64 characters and quoted.
CREATE OR REPLACE FUNCTION "intake_sync"."_lock_holder"(locker xid) RETURNS text
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  holders text;
  lockers xid[] := ARRAY[locker];
BEGIN
  IF locker IS NULL OR locker = '0'::xid THEN
    RETURN 'a transaction that has ended since';
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_locks l WHERE l.locktype = 'transactionid' AND l.granted AND l.transactionid = locker) THEN
    -- not a running transaction: the share lockers of a multixact (several pages hold a match lock shared)
    BEGIN
      SELECT pg_catalog.array_agg(m.xid) INTO lockers FROM pg_catalog.pg_get_multixact_members(locker::text::xid) m;
    EXCEPTION WHEN OTHERS THEN
      lockers := NULL;
    END;
  END IF;
  SELECT pg_catalog.string_agg(DISTINCT pg_catalog.format('backend pid %s (role %s, application_name %s)', a.pid,
      coalesce(a.usename::text, '?'), pg_catalog.quote_literal(pg_catalog.left(coalesce(a.application_name, ''), 64))), ', ')
  INTO holders
  FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_stat_activity a ON a.pid = l.pid
  WHERE l.locktype = 'transactionid' AND l.granted AND l.mode = 'ExclusiveLock' AND l.transactionid = ANY (lockers);
  RETURN coalesce(holders, 'a transaction pg_locks no longer lists (ended since, or a savepoint of one still open)');
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_lock_holder"(xid) FROM PUBLIC;

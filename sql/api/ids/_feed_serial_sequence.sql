-- The sequence that numbers one feed's rows of one table (tag: audit, changes or outbox), created on
-- the feed's first row (issue 33 §4, drizzle/0032_feed_serial_ids.sql): feed_serial_<tag>_<hash of
-- the feed>, starting after the feed's highest number in that table. A null feed (audit rows of
-- migrate and grants) has its own, as the feed ''. nextval() takes no lock a transaction keeps, so
-- numbering never waits on another transaction; only two first rows of one new feed in one table race
-- to create its sequence, and the loser uses the winner's (a feed's sequences are made when it is
-- registered, _create_feed_serials, so an application's transaction does not create them).
-- Owner only: the sequences are the owner's, and no other role may read them (their values would
-- count the feed's rows).
CREATE OR REPLACE FUNCTION "intake_sync"."_feed_serial_sequence"(tag text, feed text) RETURNS regclass
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  tbl text := CASE _feed_serial_sequence.tag WHEN 'audit' THEN 'audit_entries' WHEN 'changes' THEN 'status_changes'
    WHEN 'outbox' THEN 'outbox' END;
  seq_name text := 'feed_serial_' || _feed_serial_sequence.tag || '_'
    || pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(COALESCE(_feed_serial_sequence.feed, ''), 'UTF8')), 'hex'), 32);
  seq regclass := pg_catalog.to_regclass(pg_catalog.format('%I.%I', 'intake_sync', seq_name));
  last bigint;
BEGIN
  IF seq IS NOT NULL THEN
    RETURN seq;
  END IF;
  IF tbl IS NULL THEN
    RAISE EXCEPTION 'tag: one of audit, changes, outbox (not %)', _feed_serial_sequence.tag USING ERRCODE = '22023', COLUMN = 'tag';
  END IF;
  EXECUTE pg_catalog.format('SELECT pg_catalog.max(x.feed_serial) FROM %I.%I x WHERE x.feed IS NOT DISTINCT FROM $1', 'intake_sync', tbl)
    INTO last USING _feed_serial_sequence.feed;
  BEGIN
    EXECUTE pg_catalog.format('CREATE SEQUENCE %I.%I AS bigint START WITH %s CACHE 1', 'intake_sync', seq_name, COALESCE(last, 0) + 1);
  EXCEPTION WHEN duplicate_table OR unique_violation THEN
    -- another transaction created it first (and committed: its catalog row was waited for)
    NULL;
  END;
  RETURN pg_catalog.to_regclass(pg_catalog.format('%I.%I', 'intake_sync', seq_name));
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_feed_serial_sequence"(text, text) FROM PUBLIC;

-- BEFORE INSERT on audit_entries, status_changes and outbox (TG_ARGV[0]: the table's tag): the row's
-- number within its feed, from the feed's own sequence. A value the writer gave is replaced: the
-- number is the database's, never the caller's. The sequence's name is computed here as
-- _feed_serial_sequence names it, and that function is called only when the sequence is missing: a
-- nested call per row cost as much again as the insert itself (status_changes, 20k rows).
CREATE OR REPLACE FUNCTION "intake_sync"."_number_in_feed"() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  seq regclass := pg_catalog.to_regclass(pg_catalog.format('%I.%I', 'intake_sync', 'feed_serial_' || TG_ARGV[0] || '_'
    || pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(COALESCE(NEW.feed, ''), 'UTF8')), 'hex'), 32)));
BEGIN
  IF seq IS NULL THEN
    seq := "intake_sync"."_feed_serial_sequence"(TG_ARGV[0], NEW.feed);
  END IF;
  NEW.feed_serial := pg_catalog.nextval(seq);
  RETURN NEW;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_number_in_feed"() FROM PUBLIC;

-- BEFORE INSERT on audit_entries, status_changes and outbox (TG_ARGV[0]: the table's tag): the row's
-- number within its feed, from the feed's own sequence (_feed_serial_sequence). A value the writer
-- gave is replaced: the number is the database's, never the caller's.
CREATE OR REPLACE FUNCTION "intake_sync"."_number_in_feed"() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  NEW.feed_serial := pg_catalog.nextval("intake_sync"."_feed_serial_sequence"(TG_ARGV[0], NEW.feed));
  RETURN NEW;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_number_in_feed"() FROM PUBLIC;

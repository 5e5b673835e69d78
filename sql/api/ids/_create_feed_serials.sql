-- AFTER INSERT on feed_checkpoints: a feed registered (migrate, the daemon's start, `feeds` commands)
-- gets its three numbering sequences in the registering transaction, so the first row an application
-- writes for it never creates one (a creation holds its name until its transaction ends).
CREATE OR REPLACE FUNCTION "intake_sync"."_create_feed_serials"() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  PERFORM "intake_sync"."_feed_serial_sequence"(t.tag, NEW.feed) FROM (VALUES ('audit'), ('changes'), ('outbox')) t(tag);
  RETURN NULL;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_create_feed_serials"() FROM PUBLIC;

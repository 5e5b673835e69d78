CREATE OR REPLACE FUNCTION "intake_sync"."record_inserted_status"() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  INSERT INTO "intake_sync"."status_changes"
    (prescription_id, feed, external_id, previous_status, new_status, event_id, occurred_at)
  VALUES (NEW.id, NEW.feed, NEW.external_id, NULL, NEW.status, NEW.status_event_id, NEW.status_occurred_at);
  INSERT INTO "intake_sync"."change_commits" (xid) VALUES (pg_current_xact_id()) ON CONFLICT (xid) DO NOTHING;
  IF NOT FOUND AND EXISTS (SELECT 1 FROM "intake_sync"."change_commits" c
                           WHERE c.xid = pg_current_xact_id() AND c.committed_at IS NOT NULL) THEN
    -- stamped already (SET CONSTRAINTS ALL IMMEDIATE ran the stamp before this change): stamp the
    -- feeds it had not changed then, so no feed's reader misses this change
    PERFORM "intake_sync"."_stamp_change_feeds"(pg_current_xact_id());
  END IF;
  RETURN NULL;
END $$;

REVOKE ALL ON FUNCTION "intake_sync"."record_inserted_status"() FROM PUBLIC;

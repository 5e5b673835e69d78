-- The change feed's trigger function: one status_changes row per status change of a prescription,
-- with its feed.
CREATE OR REPLACE FUNCTION "intake_sync"."record_status_changes"() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  appended bigint;
BEGIN
  INSERT INTO "intake_sync"."status_changes"
    (prescription_id, feed, external_id, previous_status, new_status, event_id, occurred_at)
  SELECT n.id, n.feed, n.external_id, o.status, n.status, n.status_event_id, n.status_occurred_at
  FROM new_rows n JOIN old_rows o ON o.id = n.id
  WHERE n.status IS DISTINCT FROM o.status AND n.status IS NOT NULL
  ORDER BY n.id;
  GET DIAGNOSTICS appended = ROW_COUNT;
  IF appended > 0 THEN
    -- once per transaction: its deferred trigger stamps the commit
    INSERT INTO "intake_sync"."change_commits" (xid) VALUES (pg_current_xact_id()) ON CONFLICT (xid) DO NOTHING;
    IF NOT FOUND AND EXISTS (SELECT 1 FROM "intake_sync"."change_commits" c
                             WHERE c.xid = pg_current_xact_id() AND c.committed_at IS NOT NULL) THEN
      -- stamped already (SET CONSTRAINTS ALL IMMEDIATE ran the stamp before this change): stamp the
      -- feeds it had not changed then, so no feed's reader misses this change
      PERFORM "intake_sync"."_stamp_change_feeds"(pg_current_xact_id());
    END IF;
  END IF;
  RETURN NULL;
END $$;

REVOKE ALL ON FUNCTION "intake_sync"."record_status_changes"() FROM PUBLIC;

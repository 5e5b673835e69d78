-- The change feed's trigger function: one status_changes row per status change of a prescription,
-- with its feed and its number within the feed (feed_serial, issue 33 §4). The numbers are drawn here,
-- in the rows' id order, from each changed feed's sequence looked up once per statement (a page changes
-- one feed), so status_changes_feed_serial's row trigger skips these rows: it ran a function per row,
-- about 15 µs of each page's status change (issue 37). nextval() is evaluated after the sort, so a feed's
-- numbers follow the global ids, as the row trigger's did. The rows' trace_id is computed here once per
-- statement, from the column default's own expression (0033, TRACE_ID_OF_SETTING in
-- src/db/schema/trace-context-defaults.ts): the default ran it for every row, the same value 250 times a page.
CREATE OR REPLACE FUNCTION "intake_sync"."record_status_changes"() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  appended bigint;
  -- the setting's trace id, or null when it is unset or not a valid version-00 traceparent
  trace text := pg_catalog.substr(CASE WHEN pg_catalog.current_setting('intake_sync.traceparent', true) ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' AND pg_catalog.substr(pg_catalog.current_setting('intake_sync.traceparent', true), 4, 32) <> '00000000000000000000000000000000' AND pg_catalog.substr(pg_catalog.current_setting('intake_sync.traceparent', true), 37, 16) <> '0000000000000000' THEN pg_catalog.current_setting('intake_sync.traceparent', true) END, 4, 32);
BEGIN
  WITH changed AS (
    SELECT n.id, n.feed, n.external_id, o.status AS previous_status, n.status, n.status_event_id, n.status_occurred_at
    FROM new_rows n JOIN old_rows o ON o.id = n.id
    WHERE n.status IS DISTINCT FROM o.status AND n.status IS NOT NULL
  ),
  -- a CTE is computed once: a rescan of the join reads its rows, it never creates or looks up a sequence again
  serials AS (
    SELECT f.feed, "intake_sync"."_feed_serial_sequence"('changes', f.feed) AS seq
    FROM (SELECT DISTINCT c.feed FROM changed c) f
  )
  INSERT INTO "intake_sync"."status_changes"
    (prescription_id, feed, external_id, previous_status, new_status, event_id, occurred_at, feed_serial, trace_id)
  SELECT c.id, c.feed, c.external_id, c.previous_status, c.status, c.status_event_id, c.status_occurred_at, pg_catalog.nextval(s.seq), trace
  FROM changed c JOIN serials s ON s.feed = c.feed
  ORDER BY c.id;
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

-- How many rows one class of one feed would lose at this cutoff (`purge --dry-run`): the same
-- conditions as _purge, counted; writes nothing.
CREATE OR REPLACE FUNCTION "intake_sync"."_purge_due"(class text, feed text, cutoff timestamptz) RETURNS bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
-- the planner settings of _purge (issue 26): each row's finding one index probe, never a walk of every
-- open finding per event (the count of 'events' took minutes beside 60,000 open findings without statistics)
SET plan_cache_mode = force_custom_plan
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
AS $$
#variable_conflict use_variable
DECLARE
  given_feed text := feed;
  due bigint := 0;
BEGIN
  PERFORM "intake_sync"."_purge_check"(class, feed, cutoff, 1);
  IF class = 'open_findings' THEN
    SELECT pg_catalog.count(*) INTO due FROM "intake_sync"."quarantine" q
    WHERE q.feed = given_feed AND q.resolved_at IS NULL AND q.reason IN ('unmatched', 'ambiguous', 'malformed') AND q.last_seen_at < cutoff;
  ELSIF class = 'quarantine' THEN
    SELECT pg_catalog.count(*) INTO due FROM "intake_sync"."quarantine" q
    WHERE q.feed = given_feed AND q.resolved_at IS NOT NULL AND q.resolved_at < cutoff;
  ELSIF class = 'event_bodies' THEN
    SELECT pg_catalog.count(*) INTO due FROM "intake_sync"."events" e
    WHERE e.feed = given_feed AND e.raw IS NOT NULL AND e.received_at < cutoff
      -- its finding by key (quarantine_feed_key_key), one probe per event: OFFSET 0 keeps it a subplan
      AND NOT EXISTS (SELECT 1 FROM "intake_sync"."quarantine" q
                      WHERE q.feed = e.feed AND q.quarantine_key = e.id AND q.resolved_at IS NULL OFFSET 0);
  ELSIF class = 'events' THEN
    SELECT pg_catalog.count(*) INTO due FROM "intake_sync"."events" e
    WHERE e.feed = given_feed AND e.received_at < cutoff
      -- its finding by key (quarantine_feed_key_key), one probe per event: OFFSET 0 keeps it a subplan
      AND NOT EXISTS (SELECT 1 FROM "intake_sync"."quarantine" q
                      WHERE q.feed = e.feed AND q.quarantine_key = e.id AND q.resolved_at IS NULL OFFSET 0)
      AND (e.prescription_id IS NULL OR EXISTS (
        SELECT 1 FROM "intake_sync"."prescriptions" p
        WHERE p.id = e.prescription_id AND (p.status_rank >= 4 OR p.cancellation_requested_at IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM "intake_sync"."subscription_migrations" m
                          WHERE m.feed = p.feed AND m.external_id = p.external_id
                            AND m.state NOT IN ('done', 'released', 'not_sent'))
        OFFSET 0));
  ELSIF class = 'outbox_bodies' THEN
    SELECT pg_catalog.count(*) INTO due FROM "intake_sync"."outbox" o
    WHERE o.feed = given_feed AND o.body IS NOT NULL AND o.state <> 'pending' AND o.completed_at < cutoff
      -- its migration by key (subscription_migrations_pk), one probe per row: OFFSET 0 keeps it a subplan.
      -- Left to the planner with no statistics it joined every migration of the feed to every row
      -- (a materialized list filtered per row: 35 s at 66,000 bodies beside 10,000 migrations)
      AND NOT EXISTS (SELECT 1 FROM "intake_sync"."subscription_migrations" m
                      WHERE m.feed = o.feed AND m.external_id = o.external_id
                        AND m.state NOT IN ('done', 'released', 'not_sent') OFFSET 0);
  ELSIF class = 'status_changes' THEN
    -- the feed's own commits (change_commit_feeds, by feed and committed_at, 0027)
    SELECT pg_catalog.count(*) INTO due FROM "intake_sync"."change_commit_feeds" f
    JOIN "intake_sync"."status_changes" s ON s.xid = f.xid AND s.feed = f.feed
    WHERE f.feed = given_feed AND f.committed_at < cutoff;
  END IF;
  RETURN due;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_purge_due"(text, text, timestamptz) FROM PUBLIC;

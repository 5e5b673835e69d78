-- Fail closed (issue 17 part 2). A feed is "configured" once it has a row in feed_checkpoints: the
-- daemon writes it for every feed it runs when it starts (leader or standby), `intake-sync migrate`
-- for the feeds its configuration names (FEED_NAME or the FEEDS_FILE names), `checkpoint reset` for
-- the configured feed it moves. `origin` says whose feed it is, so that the built-in simulator (the
-- demo) never touches a database that holds an operator's feed, and a real run never reads a
-- simulator's checkpoint: 'operator' (claimed by a run with a base URL), 'simulator' (claimed by the
-- demo), NULL (registered, not yet claimed by a run).
ALTER TABLE "intake_sync"."feed_checkpoints" ADD COLUMN "origin" text;
--> statement-breakpoint
ALTER TABLE "intake_sync"."feed_checkpoints" ADD CONSTRAINT "feed_checkpoints_origin_check"
  CHECK ("origin" IS NULL OR "origin" IN ('operator', 'simulator'));
--> statement-breakpoint
-- Feeds that hold rows but never had a checkpoint row (prescriptions registered before any run)
-- are configured feeds too: the SQL API went on accepting them before this migration.
INSERT INTO "intake_sync"."feed_checkpoints" ("feed")
  SELECT f."feed" FROM (
    SELECT "feed" FROM "intake_sync"."prescriptions"
    UNION SELECT "feed" FROM "intake_sync"."outbox"
    UNION SELECT "feed" FROM "intake_sync"."events"
  ) f
  WHERE f."feed" ~ '^[a-z0-9_-]{1,64}$'
ON CONFLICT ("feed") DO NOTHING;
--> statement-breakpoint
-- The origin of a feed that existed before: the demo's (every prescription is one of its demo-*
-- seeds, or the simulator reset it, and nothing else was registered) or the operator's (anything
-- else that holds a position or rows). An empty feed at the beginning stays unclaimed.
UPDATE "intake_sync"."feed_checkpoints" c SET "origin" = CASE
    WHEN NOT EXISTS (SELECT 1 FROM "intake_sync"."prescriptions" p WHERE p."feed" = c."feed" AND p."external_id" NOT LIKE 'demo-%')
     AND (EXISTS (SELECT 1 FROM "intake_sync"."prescriptions" p WHERE p."feed" = c."feed")
          OR EXISTS (SELECT 1 FROM "intake_sync"."checkpoint_resets" r WHERE r."feed" = c."feed" AND r."reset_by" = 'embedded-sandbox'))
      THEN 'simulator'
    WHEN c."iterator" IS NOT NULL
      OR EXISTS (SELECT 1 FROM "intake_sync"."prescriptions" p WHERE p."feed" = c."feed")
      OR EXISTS (SELECT 1 FROM "intake_sync"."outbox" o WHERE o."feed" = c."feed")
      OR EXISTS (SELECT 1 FROM "intake_sync"."events" e WHERE e."feed" = c."feed")
      THEN 'operator'
    ELSE NULL
  END;
--> statement-breakpoint
-- The SQL API refuses a feed that was never configured: `send_prescription(p, 'defualt')` would
-- otherwise leave a row pending forever that no worker, metric or command looks at. SQLSTATE 42704
-- (undefined_object), apart from 22023 (malformed) and 23502 (missing); the message names `feed`
-- and the (already validated, identifier-only) name, and says how a feed gets configured.
CREATE OR REPLACE FUNCTION "intake_sync"."_feed_configured_check"(feed text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM "intake_sync"."feed_checkpoints" c WHERE c."feed" = _feed_configured_check.feed) THEN
    RAISE EXCEPTION 'feed: % is not a configured feed (none of this deployment''s workers runs it; a feed is registered by `intake-sync migrate` and by `intake-sync run`)', feed
      USING ERRCODE = '42704', COLUMN = 'feed';
  END IF;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_feed_configured_check"(text) FROM PUBLIC;

-- Read by the operator console (docs/console.md) as the signed-in role, and by any application role:
-- identifiers, codes, counts and times only, never patient data. security_barrier and filtered by
-- the caller's feed access (_feed_visible).
-- One row per registered feed the caller may see: the position's counters, when it last moved, the
-- newest applied event, open findings by reason, the outbox's pending and failed rows, and the lease
-- of the worker leading it (alive or not, by the database's clock), and why the feed stopped when its
-- worker stopped it (feed_stops, 0026). `origin` is whose feed it is (operator or simulator, claimed by
-- a worker's start; null after migrate or a checkpoint reset until the next start), not whether it
-- was polled: pages_applied and position_moved_at say that.
-- The feed filter reads _visible_feeds() once per query (an initplan), not _feed_visible() once per
-- row: a function call per row cost ~80 us, seconds over 100k rows (bench:console, issue 29 §8).
CREATE OR REPLACE VIEW "intake_sync"."feed_overview" WITH (security_barrier) AS
  SELECT c."feed", c."origin", c."version", c."updated_at" AS "position_moved_at", c."pages_applied", c."events_applied",
    c."events_quarantined",
    (SELECT pg_catalog.max(e."received_at") FROM "intake_sync"."events" e WHERE e."feed" = c."feed") AS "last_event_received_at",
    (SELECT e."occurred_at" FROM "intake_sync"."events" e WHERE e."feed" = c."feed" ORDER BY e."received_at" DESC LIMIT 1) AS "last_event_occurred_at",
    COALESCE((SELECT pg_catalog.jsonb_object_agg(r."reason", r."n") FROM (
        SELECT q."reason", pg_catalog.count(*) AS "n" FROM "intake_sync"."quarantine" q
        WHERE q."feed" = c."feed" AND q."resolved_at" IS NULL GROUP BY q."reason") r), '{}'::jsonb) AS "open_findings",
    (SELECT pg_catalog.count(*) FROM "intake_sync"."outbox" o WHERE o."feed" = c."feed" AND o."state" = 'pending')::bigint AS "outbox_pending",
    (SELECT pg_catalog.count(*) FROM "intake_sync"."outbox" o WHERE o."feed" = c."feed" AND o."state" = 'failed')::bigint AS "outbox_failed",
    -- the feed's lease (feed_leases, written by the leading worker): since when it leads, its last
    -- heartbeat, and until when the lease holds without one (past it: no worker leads the feed)
    l."acquired_at" AS "leader_since", l."heartbeat_at" AS "leader_heartbeat_at", l."expires_at" AS "leader_expires_at",
    -- the worker's own words for a feed it stopped (the /readyz line) and the command that fixes it;
    -- null while it runs (its next successful poll removes them)
    s."stopped_at", s."reason" AS "stop_reason", s."command" AS "stop_command",
    -- `feeds pause` (feed_pauses, 0029): while paused no replica polls it; and whether a FEEDS_FILE
    -- reload removed it (feed_retirements, 0029). Appended last: CREATE OR REPLACE VIEW adds columns only at the end
    p."paused_at", p."reason" AS "pause_reason", p."paused_by", r."retired_at",
    -- (appended after 0029's columns) whether a worker leads the feed, by the daemon's own rule (lease-sql.ts): the lease has not
    -- expired AND the backend that holds it still exists, both judged by the database's clock. The
    -- console compared the lease with its own clock, so a console host a few seconds ahead of the
    -- database (the TTL is 15 s) said "no worker leads it" while the daemon ran (issue 34 §6)
    (l."expires_at" > pg_catalog.now() AND EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity a WHERE a."pid" = l."holder_pid")) AS "leader_alive",
    pg_catalog.date_part('epoch', pg_catalog.now() - l."heartbeat_at")::double precision AS "leader_heartbeat_age_s",
    pg_catalog.date_part('epoch', pg_catalog.now() - l."expires_at")::double precision AS "leader_lapsed_s",
    -- the API version the feed reads now, when a version migration recorded its sources (feed_sources)
    (SELECT f."api_version" FROM "intake_sync"."feed_sources" f WHERE f."feed" = c."feed" AND f."state" = 'current' LIMIT 1) AS "source_api_version",
    -- open findings by reason, each counted up to 1,001 (1,001 reads "more than 1,000"): what the
    -- console's Feeds page shows. open_findings counts every one, 50,505 a feed at 101k open findings
    -- (bench:console), ~290 ms walked and sorted under load; this reads at most 1,001 entries of
    -- quarantine_open_reason_idx (0035) per reason, so its cost does not grow with the backlog (issue 34 §6)
    COALESCE((SELECT pg_catalog.jsonb_object_agg(r."reason", k."n")
        FROM pg_catalog.unnest("intake_sync"."quarantine_reasons"()) r("reason")
        CROSS JOIN LATERAL (SELECT pg_catalog.count(*) AS "n" FROM (SELECT FROM "intake_sync"."quarantine" q
          WHERE q."reason" = r."reason" AND q."feed" = c."feed" AND q."resolved_at" IS NULL LIMIT 1001) x) k
        WHERE k."n" > 0), '{}'::jsonb) AS "open_findings_capped"
  FROM "intake_sync"."feed_checkpoints" c
  LEFT JOIN "intake_sync"."feed_leases" l ON l."feed" = c."feed"
  LEFT JOIN "intake_sync"."feed_stops" s ON s."feed" = c."feed"
  LEFT JOIN "intake_sync"."feed_pauses" p ON p."feed" = c."feed"
  LEFT JOIN "intake_sync"."feed_retirements" r ON r."feed" = c."feed"
  WHERE ((SELECT "intake_sync"."_visible_feeds"()) IS NULL OR c."feed" = ANY ((SELECT "intake_sync"."_visible_feeds"())::text[]));

REVOKE ALL ON TABLE "intake_sync"."feed_overview" FROM PUBLIC;

COMMENT ON VIEW "intake_sync"."feed_overview" IS 'each visible feed: position, last applied event, open findings by reason, outbox pending/failed, the leader''s lease, why its worker stopped it, its pause, its retirement (docs/console.md)';

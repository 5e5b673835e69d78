-- Retention (issue 18, part 1): the leader's cleaner (src/sync/retention) and `intake-sync purge` take
-- PHI out of the store once it has served its purpose, and bound the growth of every history table.
-- Every purge runs through the SECURITY DEFINER functions below, so the daemon's role needs EXECUTE on
-- them and no DELETE on any table; audit_entries stays append-only for every role but the owner.
-- Each call does at most max_rows rows, picked with SKIP LOCKED: it never waits on a row a page apply,
-- a delivery or a rematch holds (the caller adds a short lock_timeout and statement_timeout).
--
-- An event whose body is purged keeps what dedupe, history and the change feed need (id, feed, name,
-- occurred_at, subscription_id, api_version, status_rank, prescription_id, received_at).
ALTER TABLE "intake_sync"."events" ALTER COLUMN "raw" DROP NOT NULL;
--> statement-breakpoint
ALTER TABLE "intake_sync"."events" ALTER COLUMN "identity_key" DROP NOT NULL;
--> statement-breakpoint
-- an expired finding keeps its identifiers and reason, not the body
ALTER TABLE "intake_sync"."quarantine" ALTER COLUMN "raw" DROP NOT NULL;
--> statement-breakpoint
-- when the cleaner expired this open finding (RETAIN_OPEN_FINDINGS); resolved_at is set with it
ALTER TABLE "intake_sync"."quarantine" ADD COLUMN "expired_at" timestamptz;
--> statement-breakpoint
-- what was sent, once the body is purged: hex sha256 of the body's jsonb text (body::text, UTF-8)
ALTER TABLE "intake_sync"."outbox" ADD COLUMN "body_sha256" text;
--> statement-breakpoint
-- The batches walk these in age order. Partial indexes on what is still to purge stay small (about one
-- retention period of rows), so a batch never scans the rows already purged.
CREATE INDEX "events_body_kept_idx" ON "intake_sync"."events" ("feed", "received_at") WHERE "raw" IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "events_feed_received_at_idx" ON "intake_sync"."events" ("feed", "received_at");
--> statement-breakpoint
CREATE INDEX "outbox_body_kept_idx" ON "intake_sync"."outbox" ("feed", "completed_at") WHERE "body" IS NOT NULL AND "state" <> 'pending';
--> statement-breakpoint
CREATE INDEX "quarantine_resolved_idx" ON "intake_sync"."quarantine" ("feed", "resolved_at") WHERE "resolved_at" IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "audit_entries_feed_at_idx" ON "intake_sync"."audit_entries" ("feed", "at");
--> statement-breakpoint
-- Per feed, the newest change (commit_seq, id) the cleaner deleted: status_changes_since() refuses a
-- cursor older than it ("cursor expired") instead of skipping the deleted changes silently.
CREATE TABLE "intake_sync"."change_horizons" (
  "feed" text PRIMARY KEY,
  "purged_seq" bigint NOT NULL,
  "purged_id" bigint NOT NULL,
  "purged_at" timestamptz NOT NULL DEFAULT pg_catalog.now()
);
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."change_horizons" FROM PUBLIC;
--> statement-breakpoint
-- The cleaner's last completed pass per feed (the metric intake_sync_retention_last_run_timestamp_seconds
-- reads it, so every replica reports the leader's runs) and what it removed.
CREATE TABLE "intake_sync"."retention_runs" (
  "feed" text PRIMARY KEY,
  "last_run_at" timestamptz NOT NULL,
  "last_counts" jsonb NOT NULL DEFAULT '{}'::jsonb
);
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."retention_runs" FROM PUBLIC;
--> statement-breakpoint
-- The youngest audit rows the cleaner may ever delete are older than this, whatever RETAIN_AUDIT or a
-- caller of _purge_audit says: the daemon's role cannot empty the trail of recent actions. An owner who
-- wants a stronger floor replaces this function (docs/security.md, "Retention").
CREATE FUNCTION "intake_sync"."_audit_retention_floor"() RETURNS interval
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
  SELECT interval '1 day'
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_audit_retention_floor"() FROM PUBLIC;
--> statement-breakpoint
-- The classes a pass purges, in the order it runs them (src/sync/retention/retention-classes.ts).
CREATE FUNCTION "intake_sync"."_purge_check"(class text, feed text, cutoff timestamptz, max_rows integer) RETURNS void
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF class IS NULL THEN
    RAISE EXCEPTION 'class: required' USING ERRCODE = '23502', COLUMN = 'class';
  END IF;
  IF class NOT IN ('open_findings', 'quarantine', 'event_bodies', 'events', 'outbox_bodies', 'status_changes') THEN
    RAISE EXCEPTION 'class: must be one of open_findings, quarantine, event_bodies, events, outbox_bodies, status_changes' USING ERRCODE = '22023', COLUMN = 'class';
  END IF;
  IF feed IS NULL THEN
    RAISE EXCEPTION 'feed: required' USING ERRCODE = '23502', COLUMN = 'feed';
  END IF;
  IF feed !~ '^[a-z0-9_-]{1,64}$' THEN
    RAISE EXCEPTION 'feed: must be 1-64 of a-z 0-9 _ -' USING ERRCODE = '22023', COLUMN = 'feed';
  END IF;
  IF cutoff IS NULL THEN
    RAISE EXCEPTION 'cutoff: required' USING ERRCODE = '23502', COLUMN = 'cutoff';
  END IF;
  IF max_rows IS NULL OR max_rows < 1 OR max_rows > 100000 THEN
    RAISE EXCEPTION 'max_rows: must be between 1 and 100000' USING ERRCODE = '22023', COLUMN = 'max_rows';
  END IF;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_purge_check"(text, text, timestamptz, integer) FROM PUBLIC;
--> statement-breakpoint
-- One batch of one class of one feed: at most max_rows rows older than cutoff. Returns how many it
-- changed (fewer than max_rows: the class is done for this cutoff, unless rows were skipped as locked).
-- Rows a running operation still needs are never touched: pending outbox rows, open findings and their
-- events, the events of prescriptions still in progress or in an unfinished `subscriptions migrate`.
CREATE FUNCTION "intake_sync"."_purge"(class text, feed text, cutoff timestamptz, max_rows integer) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
  given_feed text := feed;
  done integer := 0;
  top_seq bigint;
  top_id bigint;
  xids xid8[];
BEGIN
  PERFORM "intake_sync"."_purge_check"(class, feed, cutoff, max_rows);
  IF class = 'open_findings' THEN
    -- an open unmatched, ambiguous or malformed finding nobody resolved: expired, its body dropped, audited
    WITH picked AS (
      SELECT q.id FROM "intake_sync"."quarantine" q
      WHERE q.feed = given_feed AND q.resolved_at IS NULL AND q.reason IN ('unmatched', 'ambiguous', 'malformed')
        AND q.last_seen_at < cutoff
      ORDER BY q.last_seen_at LIMIT max_rows FOR UPDATE SKIP LOCKED
    ),
    expired AS (
      UPDATE "intake_sync"."quarantine" q SET resolved_at = pg_catalog.now(), expired_at = pg_catalog.now(), raw = NULL
      FROM picked WHERE q.id = picked.id
      RETURNING q.quarantine_key, q.event_id, q.reason, q.seen_count
    ),
    audited AS (
      SELECT "intake_sync"."_audit"('quarantine.expire', given_feed, COALESCE(e.event_id, e.quarantine_key),
        pg_catalog.jsonb_build_object('reason', e.reason, 'seen_count', e.seen_count, 'retention', 'RETAIN_OPEN_FINDINGS'))
      FROM expired e
    )
    SELECT pg_catalog.count(*)::integer INTO done FROM audited;
  ELSIF class = 'quarantine' THEN
    WITH picked AS (
      SELECT q.id FROM "intake_sync"."quarantine" q
      WHERE q.feed = given_feed AND q.resolved_at IS NOT NULL AND q.resolved_at < cutoff
      ORDER BY q.resolved_at LIMIT max_rows FOR UPDATE SKIP LOCKED
    ),
    gone AS (DELETE FROM "intake_sync"."quarantine" q USING picked WHERE q.id = picked.id RETURNING 1)
    SELECT pg_catalog.count(*)::integer INTO done FROM gone;
  ELSIF class = 'event_bodies' THEN
    WITH picked AS (
      SELECT e.id FROM "intake_sync"."events" e
      WHERE e.feed = given_feed AND e.raw IS NOT NULL AND e.received_at < cutoff
        AND NOT EXISTS (SELECT 1 FROM "intake_sync"."quarantine" q
                        WHERE q.feed = e.feed AND q.quarantine_key = e.id AND q.resolved_at IS NULL)
      ORDER BY e.received_at LIMIT max_rows FOR UPDATE SKIP LOCKED
    ),
    stripped AS (
      UPDATE "intake_sync"."events" e SET raw = NULL, payload = NULL, identity_key = NULL, erx_message_id = NULL
      FROM picked WHERE e.feed = given_feed AND e.id = picked.id RETURNING 1
    )
    SELECT pg_catalog.count(*)::integer INTO done FROM stripped;
  ELSIF class = 'events' THEN
    -- the whole row: a replay of it is stored again and changes no status (ranks only go up)
    WITH picked AS (
      SELECT e.id FROM "intake_sync"."events" e
      WHERE e.feed = given_feed AND e.received_at < cutoff
        AND NOT EXISTS (SELECT 1 FROM "intake_sync"."quarantine" q
                        WHERE q.feed = e.feed AND q.quarantine_key = e.id AND q.resolved_at IS NULL)
        -- resync and `subscriptions migrate` read the subscriptions of prescriptions still in progress
        AND (e.prescription_id IS NULL OR EXISTS (
          SELECT 1 FROM "intake_sync"."prescriptions" p
          WHERE p.id = e.prescription_id AND (p.status_rank >= 4 OR p.cancellation_requested_at IS NOT NULL)
            AND NOT EXISTS (SELECT 1 FROM "intake_sync"."subscription_migrations" m
                            WHERE m.feed = p.feed AND m.external_id = p.external_id
                              AND m.state NOT IN ('done', 'released', 'not_sent'))))
      ORDER BY e.received_at LIMIT max_rows FOR UPDATE SKIP LOCKED
    ),
    gone AS (DELETE FROM "intake_sync"."events" e USING picked WHERE e.feed = given_feed AND e.id = picked.id RETURNING 1)
    SELECT pg_catalog.count(*)::integer INTO done FROM gone;
  ELSIF class = 'outbox_bodies' THEN
    -- delivered or failed rows only; the row (its one-live-send guard, its history) stays
    WITH picked AS (
      SELECT o.id FROM "intake_sync"."outbox" o
      WHERE o.feed = given_feed AND o.body IS NOT NULL AND o.state <> 'pending' AND o.completed_at < cutoff
        AND NOT EXISTS (SELECT 1 FROM "intake_sync"."subscription_migrations" m
                        WHERE m.feed = o.feed AND m.external_id = o.external_id
                          AND m.state NOT IN ('done', 'released', 'not_sent'))
      ORDER BY o.completed_at LIMIT max_rows FOR UPDATE SKIP LOCKED
    ),
    stripped AS (
      UPDATE "intake_sync"."outbox" o
      SET body_sha256 = pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(o.body::text, 'UTF8')), 'hex'), body = NULL
      FROM picked WHERE o.id = picked.id RETURNING 1
    )
    SELECT pg_catalog.count(*)::integer INTO done FROM stripped;
  ELSIF class = 'status_changes' THEN
    -- in commit order, so the horizon below is the newest change deleted
    WITH picked AS (
      SELECT s.id, s.xid, c.commit_seq FROM "intake_sync"."change_commits" c
      JOIN "intake_sync"."status_changes" s ON s.xid = c.xid
      WHERE c.commit_seq IS NOT NULL AND c.committed_at < cutoff AND s.feed = given_feed
      ORDER BY c.commit_seq, s.id LIMIT max_rows FOR UPDATE OF s SKIP LOCKED
    ),
    gone AS (
      DELETE FROM "intake_sync"."status_changes" s USING picked WHERE s.id = picked.id
      RETURNING picked.id, picked.xid, picked.commit_seq
    )
    SELECT pg_catalog.count(*)::integer,
      (pg_catalog.array_agg(g.commit_seq ORDER BY g.commit_seq DESC, g.id DESC))[1],
      (pg_catalog.array_agg(g.id ORDER BY g.commit_seq DESC, g.id DESC))[1],
      pg_catalog.array_agg(DISTINCT g.xid)
    INTO done, top_seq, top_id, xids FROM gone g;
    IF done > 0 THEN
      INSERT INTO "intake_sync"."change_horizons" AS h ("feed", "purged_seq", "purged_id", "purged_at")
      VALUES (given_feed, top_seq, top_id, pg_catalog.now())
      ON CONFLICT ON CONSTRAINT "change_horizons_pkey" DO UPDATE SET
        purged_seq = CASE WHEN (excluded.purged_seq, excluded.purged_id) > (h.purged_seq, h.purged_id) THEN excluded.purged_seq ELSE h.purged_seq END,
        purged_id = CASE WHEN (excluded.purged_seq, excluded.purged_id) > (h.purged_seq, h.purged_id) THEN excluded.purged_id ELSE h.purged_id END,
        purged_at = excluded.purged_at;
      -- a commit whose every change (of any feed) is gone carries nothing any more
      DELETE FROM "intake_sync"."change_commits" c
      WHERE c.xid = ANY (xids) AND c.commit_seq IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM "intake_sync"."status_changes" s WHERE s.xid = c.xid);
    END IF;
  END IF;
  RETURN done;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_purge"(text, text, timestamptz, integer) FROM PUBLIC;
--> statement-breakpoint
-- How many rows one class of one feed would lose at this cutoff (`purge --dry-run`): the same
-- conditions as _purge, counted; writes nothing.
CREATE FUNCTION "intake_sync"."_purge_due"(class text, feed text, cutoff timestamptz) RETURNS bigint
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
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
      AND NOT EXISTS (SELECT 1 FROM "intake_sync"."quarantine" q
                      WHERE q.feed = e.feed AND q.quarantine_key = e.id AND q.resolved_at IS NULL);
  ELSIF class = 'events' THEN
    SELECT pg_catalog.count(*) INTO due FROM "intake_sync"."events" e
    WHERE e.feed = given_feed AND e.received_at < cutoff
      AND NOT EXISTS (SELECT 1 FROM "intake_sync"."quarantine" q
                      WHERE q.feed = e.feed AND q.quarantine_key = e.id AND q.resolved_at IS NULL)
      AND (e.prescription_id IS NULL OR EXISTS (
        SELECT 1 FROM "intake_sync"."prescriptions" p
        WHERE p.id = e.prescription_id AND (p.status_rank >= 4 OR p.cancellation_requested_at IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM "intake_sync"."subscription_migrations" m
                          WHERE m.feed = p.feed AND m.external_id = p.external_id
                            AND m.state NOT IN ('done', 'released', 'not_sent'))));
  ELSIF class = 'outbox_bodies' THEN
    SELECT pg_catalog.count(*) INTO due FROM "intake_sync"."outbox" o
    WHERE o.feed = given_feed AND o.body IS NOT NULL AND o.state <> 'pending' AND o.completed_at < cutoff
      AND NOT EXISTS (SELECT 1 FROM "intake_sync"."subscription_migrations" m
                      WHERE m.feed = o.feed AND m.external_id = o.external_id
                        AND m.state NOT IN ('done', 'released', 'not_sent'));
  ELSIF class = 'status_changes' THEN
    SELECT pg_catalog.count(*) INTO due FROM "intake_sync"."change_commits" c
    JOIN "intake_sync"."status_changes" s ON s.xid = c.xid
    WHERE c.commit_seq IS NOT NULL AND c.committed_at < cutoff AND s.feed = given_feed;
  END IF;
  RETURN due;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_purge_due"(text, text, timestamptz) FROM PUBLIC;
--> statement-breakpoint
-- Deletes at most max_rows audit rows of one feed (null: the rows no feed owns) older than `before`,
-- and never one younger than _audit_retention_floor(). The only way any role but the owner removes
-- audit rows. dry_run: counts instead.
CREATE FUNCTION "intake_sync"."_purge_audit"(feed text, "before" timestamptz, max_rows integer, dry_run boolean DEFAULT false) RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
  given_feed text := feed;
  effective timestamptz;
  done bigint := 0;
BEGIN
  IF given_feed IS NOT NULL AND given_feed !~ '^[a-z0-9_-]{1,64}$' THEN
    RAISE EXCEPTION 'feed: must be 1-64 of a-z 0-9 _ -' USING ERRCODE = '22023', COLUMN = 'feed';
  END IF;
  IF "before" IS NULL THEN
    RAISE EXCEPTION 'before: required' USING ERRCODE = '23502', COLUMN = 'before';
  END IF;
  IF max_rows IS NULL OR max_rows < 1 OR max_rows > 100000 THEN
    RAISE EXCEPTION 'max_rows: must be between 1 and 100000' USING ERRCODE = '22023', COLUMN = 'max_rows';
  END IF;
  effective := LEAST("before", pg_catalog.now() - "intake_sync"."_audit_retention_floor"());
  IF dry_run THEN
    SELECT pg_catalog.count(*) INTO done FROM "intake_sync"."audit_entries" a
    WHERE a.feed IS NOT DISTINCT FROM given_feed AND a."at" < effective;
    RETURN done;
  END IF;
  WITH picked AS (
    SELECT a.id FROM "intake_sync"."audit_entries" a
    WHERE a.feed IS NOT DISTINCT FROM given_feed AND a."at" < effective
    ORDER BY a."at" LIMIT max_rows FOR UPDATE SKIP LOCKED
  ),
  gone AS (DELETE FROM "intake_sync"."audit_entries" a USING picked WHERE a.id = picked.id RETURNING 1)
  SELECT pg_catalog.count(*) INTO done FROM gone;
  RETURN done;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_purge_audit"(text, timestamptz, integer, boolean) FROM PUBLIC;
--> statement-breakpoint
-- Records a completed pass of the cleaner or of `intake-sync purge` (retention_runs) and, when it
-- removed anything (or always_audit: a pass an operator ran), the audit row `purge.run` with the
-- counts by class, in the caller's transaction.
CREATE FUNCTION "intake_sync"."_purge_ran"(feed text, counts jsonb, on_behalf_of text DEFAULT NULL, always_audit boolean DEFAULT false) RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_variable
DECLARE
  given_feed text := feed;
  total numeric;
BEGIN
  PERFORM "intake_sync"."_purge_check"('events', given_feed, pg_catalog.now(), 1);
  IF counts IS NULL OR pg_catalog.jsonb_typeof(counts) <> 'object' THEN
    RAISE EXCEPTION 'counts: must be a json object' USING ERRCODE = '22023', COLUMN = 'counts';
  END IF;
  IF pg_catalog.octet_length(counts::text) > 2048 THEN
    RAISE EXCEPTION 'counts: must be at most 2048 bytes of json' USING ERRCODE = '22023', COLUMN = 'counts';
  END IF;
  INSERT INTO "intake_sync"."retention_runs" AS r ("feed", "last_run_at", "last_counts")
  VALUES (given_feed, pg_catalog.now(), counts)
  ON CONFLICT ON CONSTRAINT "retention_runs_pkey" DO UPDATE SET last_run_at = excluded.last_run_at, last_counts = excluded.last_counts;
  SELECT COALESCE(pg_catalog.sum(CASE WHEN pg_catalog.jsonb_typeof(v) = 'number' THEN v::text::numeric ELSE 0 END), 0)
  INTO total FROM pg_catalog.jsonb_each(counts) AS c(k, v);
  IF total > 0 OR always_audit THEN
    PERFORM "intake_sync"."_audit"('purge.run', given_feed, NULL, counts, on_behalf_of);
  END IF;
END
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_purge_ran"(text, jsonb, text, boolean) FROM PUBLIC;
--> statement-breakpoint
-- 0006's status_changes_since() with two additions: a cursor older than the newest change retention
-- deleted (change_horizons) raises SQLSTATE IS410 'cursor expired: ...' instead of skipping what was
-- deleted; and rows (and horizons) are filtered by _feed_visible(), so per-feed access reaches the feed.
CREATE OR REPLACE FUNCTION "intake_sync"."status_changes_since"("cursor" text, max_rows integer DEFAULT 1000)
RETURNS SETOF "intake_sync"."status_change"
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
  given_cursor ALIAS FOR $1;
  given_max ALIAS FOR $2;
  parts text[];
  after_seq bigint := 0;
  after_id bigint := 0;
  expired_feed text;
BEGIN
  IF given_max IS NULL OR given_max < 1 OR given_max > 10000 THEN
    RAISE EXCEPTION 'status_changes_since: max_rows must be between 1 and 10000' USING ERRCODE = '22023';
  END IF;
  IF given_cursor IS NOT NULL THEN
    parts := regexp_match(given_cursor, '^v1:([0-9]{1,18}):([0-9]{1,18})$');
    IF parts IS NULL THEN
      RAISE EXCEPTION 'status_changes_since: cursor is malformed (pass null or a cursor this function returned)' USING ERRCODE = '22023';
    END IF;
    after_seq := parts[1]::bigint;
    after_id := parts[2]::bigint;
    SELECT h.feed INTO expired_feed FROM "intake_sync"."change_horizons" h
    WHERE (after_seq, after_id) < (h.purged_seq, h.purged_id) AND "intake_sync"."_feed_visible"(h.feed)
    ORDER BY h.feed LIMIT 1;
    IF expired_feed IS NOT NULL THEN
      RAISE EXCEPTION 'cursor expired: changes after it were deleted by retention (RETAIN_STATUS_CHANGES of feed %)', expired_feed
        USING ERRCODE = 'IS410',
        HINT = 'reconcile from prescription_status, then follow again from null (the oldest change kept) or a newer cursor';
    END IF;
  END IF;
  RETURN QUERY
    SELECT 'v1:' || c.commit_seq || ':' || s.id, s.external_id, s.previous_status, s.new_status, s.event_id,
      s.occurred_at, s.changed_at, s.feed
    FROM "intake_sync"."change_commits" c
    JOIN "intake_sync"."status_changes" s ON s.xid = c.xid
    WHERE c.commit_seq >= after_seq AND (c.commit_seq > after_seq OR s.id > after_id)
      AND "intake_sync"."_feed_visible"(s.feed)
    ORDER BY c.commit_seq, s.id
    LIMIT given_max;
END $$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."status_changes_since"(text, integer) FROM PUBLIC;

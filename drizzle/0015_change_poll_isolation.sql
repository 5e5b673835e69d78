CREATE TABLE "intake_sync"."change_commit_feeds" (
	"feed" text NOT NULL,
	"commit_seq" bigint NOT NULL,
	"xid" "xid8" NOT NULL,
	CONSTRAINT "change_commit_feeds_pk" PRIMARY KEY("feed","commit_seq")
);
--> statement-breakpoint
ALTER TABLE "intake_sync"."change_commit_feeds" ADD CONSTRAINT "change_commit_feeds_xid_change_commits_xid_fk" FOREIGN KEY ("xid") REFERENCES "intake_sync"."change_commits"("xid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "change_commit_feeds_xid_idx" ON "intake_sync"."change_commit_feeds" USING btree ("xid");--> statement-breakpoint
-- Issue 25 §6: the feeds of every commit already stamped, so that the per-feed walk of
-- status_changes_since() finds them (new commits are recorded by stamp_change_commit below).
INSERT INTO "intake_sync"."change_commit_feeds" ("feed", "commit_seq", "xid")
SELECT DISTINCT s."feed", c."commit_seq", c."xid"
FROM "intake_sync"."change_commits" c JOIN "intake_sync"."status_changes" s ON s."xid" = c."xid"
WHERE c."commit_seq" IS NOT NULL;
--> statement-breakpoint
-- Issue 25 §1: a feed-filtered view is a security barrier, so no predicate, cast or function of the
-- caller runs on a row the feed filter removes. (CREATE OR REPLACE VIEW resets the options: a view
-- redefined later must say WITH (security_barrier) again; test/sql-api/feeds/views-are-barriers.test.ts.)
ALTER VIEW "intake_sync"."prescription_status" SET (security_barrier = true);
--> statement-breakpoint
ALTER VIEW "intake_sync"."outbox_status" SET (security_barrier = true);
--> statement-breakpoint
ALTER VIEW "intake_sync"."quarantine_open" SET (security_barrier = true);
--> statement-breakpoint
-- Issue 25 §7: access before existence. A role restricted to some feeds gets the same 42501 for a
-- feed it may not use whether or not that feed exists (it could otherwise list the deployment's
-- feeds); an unrestricted role (owner, runtime) still hears "not a configured feed" (42704).
CREATE OR REPLACE FUNCTION "intake_sync"."_require_feed"(feed text) RETURNS void
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $_$
BEGIN
  IF feed IS NULL THEN
    RAISE EXCEPTION 'feed: required' USING ERRCODE = '23502', COLUMN = 'feed';
  END IF;
  IF feed !~ '^[a-z0-9_-]{1,64}$' THEN
    RAISE EXCEPTION 'feed: must be 1-64 of a-z 0-9 _ -' USING ERRCODE = '22023', COLUMN = 'feed';
  END IF;
  PERFORM "intake_sync"."_feed_access_check"(feed);
  PERFORM "intake_sync"."_feed_configured_check"(feed);
END
$_$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."_require_feed"(text) FROM PUBLIC;
--> statement-breakpoint
-- Issue 25 §6 and §7: record the feeds of the commit (the per-feed walk of status_changes_since),
-- and notify with an empty payload: the one channel any role may LISTEN on carries nothing about
-- any feed (it carried the global commit_seq and the commit's change count).
CREATE OR REPLACE FUNCTION "intake_sync"."stamp_change_commit"() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
DECLARE
  seq bigint;
BEGIN
  LOCK TABLE "intake_sync"."change_clock" IN EXCLUSIVE MODE;
  seq := nextval('"intake_sync"."change_commit_seq"'::regclass);
  UPDATE "intake_sync"."change_commits" SET commit_seq = seq, committed_at = clock_timestamp() WHERE xid = NEW.xid;
  INSERT INTO "intake_sync"."change_commit_feeds" ("feed", "commit_seq", "xid")
  SELECT DISTINCT s.feed, seq, NEW.xid FROM "intake_sync"."status_changes" s WHERE s.xid = NEW.xid;
  -- delivered at commit, to listeners only, as a wake-up: it names nothing (no feed, no sequence,
  -- no count). A channel is at most 63 bytes and pg_notify() raises on a longer one, which would
  -- fail every commit: a schema name is cut to 56 (statusChannel() in src/api/status-channel.ts)
  PERFORM pg_notify(left('intake_sync', 56) || '_status', '');
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Issue 25 §6: the caller's feeds are computed once (not a SECURITY DEFINER check per row); a role
-- restricted to some feeds walks change_commit_feeds by (feed, commit_seq) from its cursor, so a
-- caught-up poll of a quiet feed costs an index probe per feed whatever another feed committed.
-- Sequential and bitmap scans are off in the function: the plan must hold on tables without
-- statistics (autovacuum off, a fresh install), where the planner may otherwise read a whole table
-- or sort every commit of the feed instead of walking the index in order up to the limit.
CREATE OR REPLACE FUNCTION "intake_sync"."status_changes_since"(cursor text, max_rows integer DEFAULT 1000) RETURNS SETOF "intake_sync"."status_change"
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET plan_cache_mode TO 'force_custom_plan'
    SET enable_seqscan TO 'off'
    SET enable_bitmapscan TO 'off'
    AS $_$
DECLARE
  given_cursor ALIAS FOR $1;
  given_max ALIAS FOR $2;
  parts text[];
  after_seq bigint := 0;
  after_id bigint := 0;
  expired_feed text;
  -- NULL: the caller sees every feed (owner, runtime, an app role granted no feed list)
  visible text[] := "intake_sync"."_visible_feeds"();
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
    WHERE (after_seq, after_id) < (h.purged_seq, h.purged_id) AND (visible IS NULL OR h.feed = ANY (visible))
    ORDER BY h.feed LIMIT 1;
    IF expired_feed IS NOT NULL THEN
      RAISE EXCEPTION 'cursor expired: changes after it were deleted by retention (RETAIN_STATUS_CHANGES of feed %)', expired_feed
        USING ERRCODE = 'IS410',
        HINT = 'reconcile from prescription_status, then follow again from null (the oldest change kept) or a newer cursor';
    END IF;
  END IF;
  IF visible IS NULL THEN
    RETURN QUERY
      SELECT 'v1:' || c.commit_seq || ':' || s.id, s.external_id, s.previous_status, s.new_status, s.event_id,
        s.occurred_at, s.changed_at, s.feed
      FROM "intake_sync"."change_commits" c
      JOIN "intake_sync"."status_changes" s ON s.xid = c.xid
      WHERE c.commit_seq >= after_seq AND (c.commit_seq > after_seq OR s.id > after_id)
      ORDER BY c.commit_seq, s.id
      LIMIT given_max;
  ELSE
    RETURN QUERY
      SELECT 'v1:' || c.commit_seq || ':' || s.id, s.external_id, s.previous_status, s.new_status, s.event_id,
        s.occurred_at, s.changed_at, s.feed
      FROM pg_catalog.unnest(visible) AS f(feed)
      -- each commit holds at least one change of its feed, but the cursor's own commit may hold
      -- none past the cursor: given_max + 1 commits per feed are enough
      CROSS JOIN LATERAL (
        SELECT cf.commit_seq, cf.xid FROM "intake_sync"."change_commit_feeds" cf
        WHERE cf.feed = f.feed AND cf.commit_seq >= after_seq
        ORDER BY cf.commit_seq LIMIT given_max + 1
      ) c
      JOIN "intake_sync"."status_changes" s ON s.xid = c.xid AND s.feed = f.feed
      WHERE c.commit_seq > after_seq OR s.id > after_id
      ORDER BY c.commit_seq, s.id
      LIMIT given_max;
  END IF;
END $_$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."status_changes_since"(text, integer) FROM PUBLIC;

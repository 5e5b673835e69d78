-- One batch of one class of one feed: at most max_rows rows older than cutoff. Returns how many it
-- changed (fewer than max_rows: the class is done for this cutoff, unless rows were skipped as locked).
-- Rows a running operation still needs are never touched: pending outbox rows, open findings and their
-- events, the events of prescriptions still in progress or in an unfinished `subscriptions migrate`.
CREATE OR REPLACE FUNCTION "intake_sync"."_purge"(class text, feed text, cutoff timestamptz, max_rows integer) RETURNS integer
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
-- every batch an index walk in its retention column's order, cut at max_rows, and every join one index
-- probe per row, whatever the tables' statistics say (issue 26): planned for a table without
-- statistics, a bitmap scan read every old row, and the findings' anti-join walked every open finding
-- per event (one 500-row batch of 'events' took minutes beside 60,000 open findings)
SET plan_cache_mode = force_custom_plan
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
-- and no materialized inner side: the status_changes batch probes each commit's changes by xid, where
-- a planner without statistics materialized every change of the feed to join them
SET enable_material = off
AS $$
#variable_conflict use_variable
DECLARE
  given_feed text := feed;
  done integer := 0;
  top_seq bigint;
  top_id bigint;
  xids xid8[];
  seqs bigint[];
  upper_seq bigint;
BEGIN
  PERFORM "intake_sync"."_purge_check"(class, feed, cutoff, max_rows);
  IF class = 'open_findings' THEN
    -- an open unmatched, ambiguous or malformed finding nobody resolved: expired, its body dropped, audited
    -- (quarantine.resolution comes with 0014_triage.sql, of the same release; plpgsql resolves it at run time)
    WITH picked AS (
      SELECT q.id FROM "intake_sync"."quarantine" q
      WHERE q.feed = given_feed AND q.resolved_at IS NULL AND q.reason IN ('unmatched', 'ambiguous', 'malformed')
        AND q.last_seen_at < cutoff
      ORDER BY q.last_seen_at LIMIT max_rows FOR UPDATE SKIP LOCKED
    ),
    expired AS (
      UPDATE "intake_sync"."quarantine" q SET resolved_at = pg_catalog.now(), expired_at = pg_catalog.now(), resolution = 'expired', raw = NULL
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
        -- its finding by key (quarantine_feed_key_key), one probe per event: OFFSET 0 keeps it a subplan
        AND NOT EXISTS (SELECT 1 FROM "intake_sync"."quarantine" q
                        WHERE q.feed = e.feed AND q.quarantine_key = e.id AND q.resolved_at IS NULL OFFSET 0)
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
        -- its finding by key (quarantine_feed_key_key), one probe per event: OFFSET 0 keeps it a subplan
        AND NOT EXISTS (SELECT 1 FROM "intake_sync"."quarantine" q
                        WHERE q.feed = e.feed AND q.quarantine_key = e.id AND q.resolved_at IS NULL OFFSET 0)
        -- resync and `subscriptions migrate` read the subscriptions of prescriptions still in progress
        AND (e.prescription_id IS NULL OR EXISTS (
          SELECT 1 FROM "intake_sync"."prescriptions" p
          WHERE p.id = e.prescription_id AND (p.status_rank >= 4 OR p.cancellation_requested_at IS NOT NULL)
            AND NOT EXISTS (SELECT 1 FROM "intake_sync"."subscription_migrations" m
                            WHERE m.feed = p.feed AND m.external_id = p.external_id
                              AND m.state NOT IN ('done', 'released', 'not_sent'))
          OFFSET 0))
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
    -- the feed's newest commit before the cutoff, one probe of change_commit_feeds_committed_at_idx: a
    -- feed's committed_at grows with its commit_seq (both taken under the feed's clock row,
    -- _stamp_change_feeds), so the feed's commits up to it are exactly its commits older than the cutoff
    SELECT f.commit_seq INTO upper_seq FROM "intake_sync"."change_commit_feeds" f
    WHERE f.feed = given_feed AND f.committed_at < cutoff ORDER BY f.committed_at DESC LIMIT 1;
    IF upper_seq IS NULL THEN
      RETURN 0;
    END IF;
    -- whole commits of the feed, oldest first (change_commit_feeds_pk) up to that one: a cursor counts
    -- a commit's changes by their rank (status_changes_since), which a part deleted would shift. Commits
    -- while fewer than max_rows changes come before them: a batch passes max_rows by less than one
    -- commit, so a batch that did not drain the class still answers max_rows or more. Each commit's
    -- changes by status_changes_xid_idx; the other feeds' commits are never read
    WITH commits AS (
      SELECT f.commit_seq, f.xid FROM "intake_sync"."change_commit_feeds" f
      WHERE f.feed = given_feed AND f.commit_seq <= upper_seq
      ORDER BY f.commit_seq LIMIT max_rows FOR UPDATE SKIP LOCKED
    ),
    sized AS (
      SELECT c.commit_seq, c.xid,
        (SELECT pg_catalog.count(*) FROM "intake_sync"."status_changes" s WHERE s.xid = c.xid AND s.feed = given_feed) AS n
      FROM commits c
    ),
    taken AS (
      SELECT z.commit_seq, z.xid, z.n FROM (
        SELECT y.*, pg_catalog.sum(y.n) OVER (ORDER BY y.commit_seq) - y.n AS before FROM sized y
      ) z
      WHERE z.before < max_rows
    )
    SELECT pg_catalog.array_agg(t.xid ORDER BY t.commit_seq), pg_catalog.array_agg(t.commit_seq ORDER BY t.commit_seq),
      pg_catalog.max(t.commit_seq), (pg_catalog.array_agg(t.n ORDER BY t.commit_seq DESC))[1]
    INTO xids, seqs, top_seq, top_id FROM taken t;
    IF top_seq IS NOT NULL THEN
      -- by the key lists: each an index probe (status_changes_xid_idx, change_commit_feeds_pk)
      DELETE FROM "intake_sync"."status_changes" s WHERE s.xid = ANY (xids) AND s.feed = given_feed;
      GET DIAGNOSTICS done = ROW_COUNT;
      DELETE FROM "intake_sync"."change_commit_feeds" f WHERE f.feed = given_feed AND f.commit_seq = ANY (seqs);
      -- the horizon: every change of the feed up to commit top_seq, all top_id of its own
      INSERT INTO "intake_sync"."change_horizons" AS h ("feed", "purged_seq", "purged_id", "purged_n", "purged_at")
      VALUES (given_feed, top_seq, 0, top_id, pg_catalog.now())
      ON CONFLICT ON CONSTRAINT "change_horizons_pkey" DO UPDATE SET
        purged_n = CASE WHEN h.purged_n IS NULL OR excluded.purged_seq > h.purged_seq THEN excluded.purged_n ELSE h.purged_n END,
        purged_seq = GREATEST(excluded.purged_seq, h.purged_seq),
        purged_at = excluded.purged_at;
      -- a commit whose every change (of any feed) is gone carries nothing any more (its other rows
      -- of change_commit_feeds go with it, cascade)
      DELETE FROM "intake_sync"."change_commits" c
      WHERE c.xid = ANY (xids) AND NOT EXISTS (SELECT 1 FROM "intake_sync"."status_changes" s WHERE s.xid = c.xid);
    END IF;
  END IF;
  RETURN done;
END
$$;

REVOKE ALL ON FUNCTION "intake_sync"."_purge"(text, text, timestamptz, integer) FROM PUBLIC;

-- The change feed after a cursor, each feed in its commit order. A cursor older than the newest
-- change retention deleted (change_horizons) raises SQLSTATE IS410 'cursor expired: ...' instead of
-- skipping what was deleted; rows (and horizons) are those of the caller's visible feeds only.
--
-- Issue 33: each feed has its own clock (change_clocks), so a cursor is a position per feed and
-- counts nothing of another feed: 'v2:' then, for each visible feed with a position, feed.seq.n (the
-- feed's commit_seq, and how many of that commit's changes of the feed were returned, in id order).
-- No global counter or id is in it. Across feeds rows come in stamp-time order (each feed's own
-- order kept); a caller that sees one feed gets exactly its commit order. A 'v1:seq:id' cursor (the
-- global clock, before 0030) is still accepted: every feed's clock starts above the global one, so it
-- is the same position in each feed.
-- Each row carries the trace id of the transaction that made the change (0033; null when it was not
-- traced): a follower links the update it reads to the page that applied it.
-- The caller's feeds are computed once (not a SECURITY DEFINER check per row); each feed is walked
-- in change_commit_feeds by (feed, commit_seq) from its position, so a caught-up poll of a quiet feed
-- costs an index probe per feed whatever another feed committed.
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
  -- NULL: the caller sees every feed (owner, runtime, an app role granted no feed list)
  visible text[] := "intake_sync"."_visible_feeds"();
  feeds text[];
  at_seq bigint[];
  at_n bigint[];
  legacy text[];
  entry text[];
  k integer;
  counted bigint;
  position text;
  expired_feed text;
  r record;
  change "intake_sync"."status_change";
BEGIN
  IF given_max IS NULL OR given_max < 1 OR given_max > 10000 THEN
    RAISE EXCEPTION 'status_changes_since: max_rows must be between 1 and 10000' USING ERRCODE = '22023';
  END IF;
  IF visible IS NULL THEN
    SELECT coalesce(pg_catalog.array_agg(c.feed ORDER BY c.feed), '{}') INTO feeds FROM "intake_sync"."change_clocks" c;
  ELSE
    SELECT coalesce(pg_catalog.array_agg(DISTINCT v.feed ORDER BY v.feed), '{}') INTO feeds FROM pg_catalog.unnest(visible) AS v(feed);
  END IF;
  at_seq := pg_catalog.array_fill(0::bigint, ARRAY[pg_catalog.cardinality(feeds)]);
  at_n := at_seq;
  IF given_cursor IS NOT NULL THEN
    legacy := pg_catalog.regexp_match(given_cursor, '^v1:([0-9]{1,18}):([0-9]{1,18})$');
    IF legacy IS NOT NULL THEN
      -- the same position in every feed: its changes of commit seq with ids up to id were returned
      FOR k IN 1 .. pg_catalog.cardinality(feeds) LOOP
        at_seq[k] := legacy[1]::bigint;
        SELECT pg_catalog.count(*) INTO counted FROM "intake_sync"."change_commit_feeds" cf
        JOIN "intake_sync"."status_changes" s ON s.xid = cf.xid AND s.feed = cf.feed
        WHERE cf.feed = feeds[k] AND cf.commit_seq = legacy[1]::bigint AND s.id <= legacy[2]::bigint;
        at_n[k] := counted;
      END LOOP;
      -- a horizon of before 0030 holds a status_changes id: compared as such
      SELECT h.feed INTO expired_feed FROM "intake_sync"."change_horizons" h
      WHERE h.feed = ANY (feeds) AND h.purged_n IS NULL AND (legacy[1]::bigint, legacy[2]::bigint) < (h.purged_seq, h.purged_id)
      ORDER BY h.feed LIMIT 1;
    ELSIF pg_catalog.length(given_cursor) <= 16384
      AND given_cursor ~ '^v2:[a-z0-9_-]{1,64}\.[0-9]{1,18}\.[0-9]{1,9}(,[a-z0-9_-]{1,64}\.[0-9]{1,18}\.[0-9]{1,9})*$' THEN
      -- a feed the caller no longer sees is ignored; one it sees and the cursor does not name starts at 0
      FOR entry IN
        SELECT pg_catalog.regexp_match(e.part, '^([a-z0-9_-]{1,64})\.([0-9]{1,18})\.([0-9]{1,9})$')
        FROM pg_catalog.unnest(pg_catalog.string_to_array(pg_catalog.substr(given_cursor, 4), ',')) AS e(part)
      LOOP
        k := pg_catalog.array_position(feeds, entry[1]);
        IF k IS NOT NULL THEN
          at_seq[k] := entry[2]::bigint;
          at_n[k] := entry[3]::bigint;
        END IF;
      END LOOP;
    ELSE
      RAISE EXCEPTION 'status_changes_since: cursor is malformed (pass null or a cursor this function returned)' USING ERRCODE = '22023';
    END IF;
    IF expired_feed IS NULL THEN
      SELECT h.feed INTO expired_feed FROM "intake_sync"."change_horizons" h
      JOIN ROWS FROM (pg_catalog.unnest(feeds), pg_catalog.unnest(at_seq), pg_catalog.unnest(at_n)) AS p(feed, seq, n) ON p.feed = h.feed
      WHERE (h.purged_n IS NOT NULL AND (p.seq, p.n) < (h.purged_seq, h.purged_n::bigint))
         OR (h.purged_n IS NULL AND legacy IS NULL AND p.seq < h.purged_seq)
      ORDER BY h.feed LIMIT 1;
    END IF;
    IF expired_feed IS NOT NULL THEN
      RAISE EXCEPTION 'cursor expired: changes after it were deleted by retention (RETAIN_STATUS_CHANGES of feed %)', expired_feed
        USING ERRCODE = 'IS410',
        HINT = 'reconcile from prescription_status, then follow again from null (the oldest change kept) or a newer cursor';
    END IF;
  END IF;
  FOR r IN
    SELECT w.k, w.feed, w.commit_seq, w.n, w.external_id, w.previous_status, w.new_status, w.event_id, w.occurred_at, w.changed_at, w.trace_id
    FROM (
      SELECT p.k, p.feed, x.commit_seq, x.n, x.external_id, x.previous_status, x.new_status, x.event_id, x.occurred_at, x.changed_at, x.trace_id,
        -- never decreasing in the feed's own order, so sorting by it keeps each feed's commit order
        pg_catalog.max(x.committed_at) OVER (PARTITION BY p.feed ORDER BY x.commit_seq, x.n) AS stamped
      FROM ROWS FROM (pg_catalog.unnest(feeds), pg_catalog.unnest(at_seq), pg_catalog.unnest(at_n)) WITH ORDINALITY AS p(feed, seq, n, k)
      CROSS JOIN LATERAL (
        SELECT c.commit_seq, c.committed_at, y.n, y.external_id, y.previous_status, y.new_status, y.event_id, y.occurred_at, y.changed_at, y.trace_id
        -- each commit holds at least one change of its feed, but the cursor's own commit may hold
        -- none past the cursor: given_max + 1 commits per feed are enough
        FROM (
          SELECT cf.commit_seq, cf.xid, coalesce(cf.committed_at, '-infinity') AS committed_at FROM "intake_sync"."change_commit_feeds" cf
          WHERE cf.feed = p.feed AND cf.commit_seq >= p.seq
          ORDER BY cf.commit_seq LIMIT given_max + 1
        ) c
        CROSS JOIN LATERAL (
          SELECT pg_catalog.row_number() OVER (ORDER BY s.id) AS n, s.external_id, s.previous_status, s.new_status, s.event_id,
            s.occurred_at, s.changed_at, s.trace_id
          FROM "intake_sync"."status_changes" s WHERE s.xid = c.xid AND s.feed = p.feed
        ) y
        WHERE c.commit_seq > p.seq OR y.n > p.n
        ORDER BY c.commit_seq, y.n LIMIT given_max
      ) x
    ) w
    ORDER BY w.stamped, w.feed, w.commit_seq, w.n
    LIMIT given_max
  LOOP
    at_seq[r.k] := r.commit_seq;
    at_n[r.k] := r.n;
    SELECT 'v2:' || pg_catalog.string_agg(feeds[g.i] || '.' || at_seq[g.i] || '.' || at_n[g.i], ',' ORDER BY g.i) INTO position
    FROM pg_catalog.generate_subscripts(feeds, 1) AS g(i) WHERE at_seq[g.i] > 0 OR at_n[g.i] > 0;
    change.cursor := position;
    change.external_id := r.external_id;
    change.previous_status := r.previous_status;
    change.new_status := r.new_status;
    change.event_id := r.event_id;
    change.occurred_at := r.occurred_at;
    change.changed_at := r.changed_at;
    change.feed := r.feed;
    change.trace_id := r.trace_id;
    RETURN NEXT change;
  END LOOP;
END $_$;

REVOKE ALL ON FUNCTION "intake_sync"."status_changes_since"(text, integer) FROM PUBLIC;

-- Change feed (docs/sql-api/changes.md). Every status change of a prescription appends a row to
-- status_changes in the changing transaction (a trigger, so page apply, rematch and
-- register_prescription cannot forget it), and every transaction that appended any gets one
-- change_commits row, stamped AT COMMIT with a commit_seq that follows the commit order.
-- Readers page through (commit_seq, status_changes.id): a bigserial alone is taken before commit,
-- so a reader could pass an id whose transaction commits later and never see it.
--
-- Why commit_seq comes from a sequence under a table lock, not from `update change_clock set
-- last_seq = last_seq + 1`: a writer at REPEATABLE READ or SERIALIZABLE (a vendor application
-- calling the SQL API) would fail that update with "could not serialize access due to concurrent
-- update" whenever another writer had committed a change since its snapshot. LOCK TABLE and
-- nextval() ignore snapshots, so writers at every isolation level commit. A sequence value taken
-- by a transaction that then fails to commit leaves a hole in commit_seq; holes are harmless, the
-- order is what readers rely on.
CREATE SEQUENCE "intake_sync"."change_commit_seq" AS bigint CACHE 1;
--> statement-breakpoint
COMMENT ON TABLE "intake_sync"."change_clock" IS 'commit lock of the change feed: stamp_change_commit() holds it in EXCLUSIVE mode from drawing a commit_seq (change_commit_seq) to the end of its commit; last_seq is unused';
--> statement-breakpoint
-- Statement-level with transition tables: a 250-event page pays one plpgsql call, not 250.
-- Transition tables cannot be combined with a column list (UPDATE OF status), so the function
-- compares old and new status itself.
CREATE FUNCTION "intake_sync"."record_status_changes"() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  appended bigint;
BEGIN
  INSERT INTO "intake_sync"."status_changes"
    (prescription_id, external_id, previous_status, new_status, event_id, occurred_at)
  SELECT n.id, n.external_id, o.status, n.status, n.status_event_id, n.status_occurred_at
  FROM new_rows n JOIN old_rows o ON o.id = n.id
  WHERE n.status IS DISTINCT FROM o.status AND n.status IS NOT NULL
  ORDER BY n.id;
  GET DIAGNOSTICS appended = ROW_COUNT;
  IF appended > 0 THEN
    -- once per transaction: its deferred trigger stamps the commit
    INSERT INTO "intake_sync"."change_commits" (xid) VALUES (pg_current_xact_id()) ON CONFLICT (xid) DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."record_status_changes"() FROM PUBLIC;
--> statement-breakpoint
CREATE TRIGGER "prescriptions_status_changes"
AFTER UPDATE ON "intake_sync"."prescriptions"
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION "intake_sync"."record_status_changes"();
--> statement-breakpoint
-- Rows are registered without a status today; a row inserted with one (a restore, a future
-- registration path) is a change from nothing. Row-level with WHEN: an insert without a status
-- (every bulk registration) is filtered in C and calls no function at all.
CREATE FUNCTION "intake_sync"."record_inserted_status"() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  INSERT INTO "intake_sync"."status_changes"
    (prescription_id, external_id, previous_status, new_status, event_id, occurred_at)
  VALUES (NEW.id, NEW.external_id, NULL, NEW.status, NEW.status_event_id, NEW.status_occurred_at);
  INSERT INTO "intake_sync"."change_commits" (xid) VALUES (pg_current_xact_id()) ON CONFLICT (xid) DO NOTHING;
  RETURN NULL;
END $$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."record_inserted_status"() FROM PUBLIC;
--> statement-breakpoint
CREATE TRIGGER "prescriptions_inserted_status"
AFTER INSERT ON "intake_sync"."prescriptions"
FOR EACH ROW WHEN (NEW.status IS NOT NULL) EXECUTE FUNCTION "intake_sync"."record_inserted_status"();
--> statement-breakpoint
-- Runs at COMMIT (deferred), once per writing transaction. The EXCLUSIVE lock on change_clock is
-- taken here and released only after the transaction has become visible to others, so the next
-- writer draws its commit_seq after this one is visible: commit_seq order is commit order, and the
-- committed seqs any snapshot sees have no later-committing gap below them.
CREATE FUNCTION "intake_sync"."stamp_change_commit"() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  seq bigint;
  changes bigint;
BEGIN
  LOCK TABLE "intake_sync"."change_clock" IN EXCLUSIVE MODE;
  seq := nextval('"intake_sync"."change_commit_seq"'::regclass);
  UPDATE "intake_sync"."change_commits" SET commit_seq = seq, committed_at = clock_timestamp() WHERE xid = NEW.xid;
  SELECT count(*) INTO changes FROM "intake_sync"."status_changes" WHERE xid = NEW.xid;
  -- delivered at commit, to listeners only; it names nothing but the commit (no PHI). A channel is
  -- at most 63 bytes and pg_notify() raises on a longer one, which would fail every commit: a
  -- schema name is cut to 56 (statusChannel() in src/sync/status-channel.ts does the same)
  PERFORM pg_notify(left('intake_sync', 56) || '_status', json_build_object('commit_seq', seq, 'changes', changes)::text);
  RETURN NULL;
END $$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."stamp_change_commit"() FROM PUBLIC;
--> statement-breakpoint
CREATE CONSTRAINT TRIGGER "change_commits_stamp"
AFTER INSERT ON "intake_sync"."change_commits"
DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW EXECUTE FUNCTION "intake_sync"."stamp_change_commit"();
--> statement-breakpoint
-- The row type of status_changes_since(). A type rather than RETURNS TABLE: its `cursor` column
-- would otherwise clash with the argument of the same name.
CREATE TYPE "intake_sync"."status_change" AS (
  "cursor" text,
  external_id text,
  previous_status text,
  new_status text,
  event_id text,
  occurred_at timestamptz,
  changed_at timestamptz
);
--> statement-breakpoint
-- Changes committed after `cursor` (null: from the start), in commit order, at most max_rows.
-- Index-driven: change_commits by commit_seq, then status_changes by (xid, id); the LIMIT stops
-- both scans (an incremental sort orders ids within a commit). Custom plans only: a generic plan
-- cannot know that `commit_seq >= $1` is a short range.
CREATE FUNCTION "intake_sync"."status_changes_since"("cursor" text, max_rows integer DEFAULT 1000)
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
  END IF;
  RETURN QUERY
    SELECT 'v1:' || c.commit_seq || ':' || s.id, s.external_id, s.previous_status, s.new_status, s.event_id,
      s.occurred_at, s.changed_at
    FROM "intake_sync"."change_commits" c
    JOIN "intake_sync"."status_changes" s ON s.xid = c.xid
    WHERE c.commit_seq >= after_seq AND (c.commit_seq > after_seq OR s.id > after_id)
    ORDER BY c.commit_seq, s.id
    LIMIT given_max;
END $$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION "intake_sync"."status_changes_since"(text, integer) FROM PUBLIC;

-- Issue 33 §4: the ids an application reads count only its own feed. audit_trail, prescription_history
-- and outbox_status showed each row's global id (one identity sequence per table), and
-- send_prescription, cancel_prescription and request_reveal returned it: an app of one feed could
-- subtract two of its own ids and learn how many rows every other feed wrote in between.
-- Each row now also carries feed_serial, its number within its feed (the n-th audit row, status change
-- or outbox row of that feed), drawn by a BEFORE INSERT trigger (sql/api/ids) from the feed's own
-- sequence feed_serial_<table>_<hash of the feed>: nextval() takes no lock that a transaction keeps,
-- so no writer waits on another feed's (or its own feed's) open transaction. The views show
-- feed_serial as "id". The global id stays the key the daemon and the owner's tools use.
-- Existing rows are numbered in their id order, so each feed's order is unchanged. The renumbering
-- rewrites every row of the three tables under the migration's lock (docs/upgrading.md, 0032).
ALTER TABLE "intake_sync"."audit_entries" ADD COLUMN "feed_serial" bigint;
--> statement-breakpoint
ALTER TABLE "intake_sync"."status_changes" ADD COLUMN "feed_serial" bigint;
--> statement-breakpoint
ALTER TABLE "intake_sync"."outbox" ADD COLUMN "feed_serial" bigint;
--> statement-breakpoint
UPDATE "intake_sync"."audit_entries" a SET "feed_serial" = n."serial"
FROM (SELECT x."id", pg_catalog.row_number() OVER (PARTITION BY x."feed" ORDER BY x."id") AS "serial" FROM "intake_sync"."audit_entries" x) n
WHERE a."id" = n."id";
--> statement-breakpoint
UPDATE "intake_sync"."status_changes" s SET "feed_serial" = n."serial"
FROM (SELECT x."id", pg_catalog.row_number() OVER (PARTITION BY x."feed" ORDER BY x."id") AS "serial" FROM "intake_sync"."status_changes" x) n
WHERE s."id" = n."id";
--> statement-breakpoint
UPDATE "intake_sync"."outbox" o SET "feed_serial" = n."serial"
FROM (SELECT x."id", pg_catalog.row_number() OVER (PARTITION BY x."feed" ORDER BY x."id") AS "serial" FROM "intake_sync"."outbox" x) n
WHERE o."id" = n."id";
--> statement-breakpoint
-- the audit rows of sends and cancellations named their outbox row by its global id: they name it by
-- its new number, or (its row already purged) not at all
UPDATE "intake_sync"."audit_entries" a
SET "detail" = CASE WHEN o."feed_serial" IS NULL THEN a."detail" - 'outbox_id'
  ELSE pg_catalog.jsonb_set(a."detail", '{outbox_id}', pg_catalog.to_jsonb(o."feed_serial")) END
FROM "intake_sync"."audit_entries" x
LEFT JOIN "intake_sync"."outbox" o ON pg_catalog.jsonb_typeof(x."detail" -> 'outbox_id') = 'number'
  AND o."id" = (x."detail" ->> 'outbox_id')::numeric
WHERE a."id" = x."id" AND x."action" IN ('outbox.send', 'outbox.cancel') AND x."detail" ? 'outbox_id';
--> statement-breakpoint
ALTER TABLE "intake_sync"."audit_entries" ALTER COLUMN "feed_serial" SET NOT NULL;
--> statement-breakpoint
ALTER TABLE "intake_sync"."status_changes" ALTER COLUMN "feed_serial" SET NOT NULL;
--> statement-breakpoint
ALTER TABLE "intake_sync"."outbox" ALTER COLUMN "feed_serial" SET NOT NULL;
--> statement-breakpoint
-- no planner statistics on any column an app can filter by (0029: EXPLAIN must not count another feed's rows)
ALTER TABLE "intake_sync"."audit_entries" ALTER COLUMN "feed_serial" SET STATISTICS 0;
--> statement-breakpoint
ALTER TABLE "intake_sync"."status_changes" ALTER COLUMN "feed_serial" SET STATISTICS 0;
--> statement-breakpoint
ALTER TABLE "intake_sync"."outbox" ALTER COLUMN "feed_serial" SET STATISTICS 0;
--> statement-breakpoint
-- an app finds the outbox row send_prescription numbered by (feed, id); the outbox is small (pending
-- and recent rows), so a plain build. The number leads: led by feed, this index was the planner's pick
-- without statistics for every outbox query on a feed and an external_id (it matched the feed alone, so
-- the outbox answer trigger read the feed's whole outbox per inserted row: quadratic)
CREATE UNIQUE INDEX "outbox_feed_serial_idx" ON "intake_sync"."outbox" USING btree ("feed_serial","feed");
--> statement-breakpoint
-- The Feeds page (feed_overview, bench:console at 1M events) counted each feed's failed outbox rows by
-- reading every outbox row of the feed (161 of its 350 ms under load): a partial index of the failed
-- rows, usable only by a query that asks for failed rows, so it can take no other query's plan.
-- (A partial (feed, reason) index of open findings for the same page's counts was tried and dropped:
-- with no statistics the Search's lookups by event id chose it and walked every open finding of the
-- feed per event, 2.3 s.)
CREATE INDEX "outbox_failed_idx" ON "intake_sync"."outbox" USING btree ("feed") WHERE state = 'failed';
--> statement-breakpoint
-- each feed's sequences now, starting after its last number, so the first write after the upgrade
-- creates nothing (sql/api/ids/_feed_serial_sequence.sql names them the same way and creates the
-- sequences of a feed registered later)
DO $$
DECLARE
  t record;
  f record;
BEGIN
  FOR t IN SELECT * FROM (VALUES ('audit', 'audit_entries'), ('changes', 'status_changes'), ('outbox', 'outbox')) v(tag, tbl) LOOP
    FOR f IN EXECUTE pg_catalog.format(
      'SELECT k.feed, pg_catalog.max(k.last) AS last
       FROM (SELECT COALESCE(y.feed, %L) AS feed, y.feed_serial AS last FROM "intake_sync".%I y
             UNION ALL SELECT c.feed, 0 FROM "intake_sync".feed_checkpoints c) k
       GROUP BY k.feed', '', t.tbl) LOOP
      EXECUTE pg_catalog.format('CREATE SEQUENCE IF NOT EXISTS "intake_sync".%I AS bigint START WITH %s CACHE 1',
        'feed_serial_' || t.tag || '_' || pg_catalog.left(pg_catalog.encode(pg_catalog.sha256(pg_catalog.convert_to(f.feed, 'UTF8')), 'hex'), 32),
        COALESCE(f.last, 0) + 1);
    END LOOP;
  END LOOP;
END
$$;

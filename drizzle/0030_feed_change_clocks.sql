-- Issue 33: one commit clock per feed instead of the global change_clock. The stamp of a commit
-- (stamp_change_commit, sql/api/changes) locked change_clock in EXCLUSIVE mode until the commit
-- ended, and any session may SET CONSTRAINTS ALL IMMEDIATE: an application of one feed could hold
-- every feed's commits. Now a commit locks the clock row of each feed it changed and draws that
-- feed's commit_seq from the feed's own sequence (created on its first commit, _change_clock): it
-- waits only on commits of those feeds.
CREATE TABLE "intake_sync"."change_clocks" (
	"feed" text PRIMARY KEY NOT NULL
);
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."change_clocks" FROM PUBLIC;
--> statement-breakpoint
COMMENT ON TABLE "intake_sync"."change_clocks" IS 'commit clock of each feed: stamp_change_commit() locks the row of every feed a commit changed from drawing its commit_seq (the feed''s sequence change_clock_<sha256>) to the end of the commit; never updated';
--> statement-breakpoint
-- every feed that has changes gets its clock row now: status_changes_since() of a role that sees
-- every feed reads the feeds from here
INSERT INTO "intake_sync"."change_clocks" ("feed") SELECT DISTINCT f."feed" FROM "intake_sync"."change_commit_feeds" f ON CONFLICT DO NOTHING;
--> statement-breakpoint
COMMENT ON SEQUENCE "intake_sync"."change_commit_seq" IS 'the global commit clock before 0030, no longer drawn: each feed''s sequence starts above its last value, so a cursor of before 0030 is a position in every feed';
--> statement-breakpoint
DROP TABLE "intake_sync"."change_clock" CASCADE;
--> statement-breakpoint
ALTER TABLE "intake_sync"."change_commit_feeds" ADD COLUMN "committed_at" timestamp with time zone;
--> statement-breakpoint
UPDATE "intake_sync"."change_commit_feeds" f SET "committed_at" = c."committed_at"
FROM "intake_sync"."change_commits" c WHERE c."xid" = f."xid";
--> statement-breakpoint
CREATE INDEX "change_commit_feeds_committed_at_idx" ON "intake_sync"."change_commit_feeds" USING btree ("feed","committed_at");
--> statement-breakpoint
-- A retention horizon is now (purged_seq, purged_n): every change of the feed up to its commit
-- purged_seq, and its first purged_n changes of that commit (whole commits are purged, so purged_n is
-- all of them). Null purged_n: a horizon of before 0030, whose purged_id is a status_changes id.
ALTER TABLE "intake_sync"."change_horizons" ADD COLUMN "purged_n" integer;

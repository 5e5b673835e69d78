CREATE TABLE "intake_sync"."change_commit_feeds" (
	"feed" text NOT NULL,
	"commit_seq" bigint NOT NULL,
	"xid" "xid8" NOT NULL,
	CONSTRAINT "change_commit_feeds_pk" PRIMARY KEY("feed","commit_seq")
);
--> statement-breakpoint
ALTER TABLE "intake_sync"."change_commit_feeds" ADD CONSTRAINT "change_commit_feeds_xid_change_commits_xid_fk" FOREIGN KEY ("xid") REFERENCES "intake_sync"."change_commits"("xid") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "change_commit_feeds_xid_idx" ON "intake_sync"."change_commit_feeds" USING btree ("xid");
--> statement-breakpoint
-- Issue 25 §6: the feeds of every commit already stamped, so that the per-feed walk of
-- status_changes_since() finds them (new commits are recorded by sql/api/changes/stamp_change_commit.sql).
INSERT INTO "intake_sync"."change_commit_feeds" ("feed", "commit_seq", "xid")
SELECT DISTINCT s."feed", c."commit_seq", c."xid"
FROM "intake_sync"."change_commits" c JOIN "intake_sync"."status_changes" s ON s."xid" = c."xid"
WHERE c."commit_seq" IS NOT NULL;

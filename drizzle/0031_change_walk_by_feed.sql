-- status_changes_xid_idx gains the feed: status_changes_since walks a feed's changes of one commit by
-- (xid, feed, id). With no planner statistics on feed (0029), the old (xid, id) lost to
-- (feed, external_id, id), which reads every change of the feed for each commit. The rebuild holds a
-- write lock on status_changes while it runs (docs/upgrading.md).
DROP INDEX "intake_sync"."status_changes_xid_idx";--> statement-breakpoint
CREATE INDEX "status_changes_xid_idx" ON "intake_sync"."status_changes" USING btree ("xid","feed","id");
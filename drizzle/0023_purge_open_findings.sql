-- Issue 26: the open_findings purge class walks its batch in last_seen_at order, feed by feed. Without
-- this index each batch sorted every open finding of the feed (141 ms a batch beside 60,000 of them,
-- and growing with the backlog); partial on exactly the class's predicate (sql/api/retention/_purge.sql),
-- so it holds only the findings that can expire.
CREATE INDEX "quarantine_open_expiry_idx" ON "intake_sync"."quarantine" USING btree ("feed", "last_seen_at") WHERE "resolved_at" IS NULL AND "reason" IN ('unmatched', 'ambiguous', 'malformed');

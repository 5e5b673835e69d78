-- Issue 34 §6: the console's Feeds page counted every open finding of each feed by reason (50,505 a feed
-- at bench:console's 101k open findings). It now counts each (feed, reason) up to 1,001
-- (feed_overview.open_findings_capped), which needs an index whose range is one feed's findings of one
-- reason: (reason, feed, first_seen_at, quarantine_key) of the open findings, which also serves the
-- quarantine list filtered by feed and reason in its order. It replaces quarantine_open_idx (reason), a
-- prefix of it. Reason leads, not feed: with no statistics a (feed, reason) index was taken for the
-- Search's lookup of an event's finding by (event_id, feed) and walked every open finding of the feed.
-- CREATE INDEX blocks writes to quarantine while it builds (about a second at 110k findings).
DROP INDEX "intake_sync"."quarantine_open_idx";--> statement-breakpoint
CREATE INDEX "quarantine_open_reason_idx" ON "intake_sync"."quarantine" USING btree ("reason","feed","first_seen_at","quarantine_key") WHERE resolved_at is null;
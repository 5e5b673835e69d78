-- API version migration: the base URL each outbox row's request went through, fixed at its first claim
-- from the feed's current source. A send through a source that drains afterwards (claimed before the
-- migration started, in flight then) joins that migration's set, and the old source is not retired
-- before it is moved (src/sync/subscription-migration.ts, feed-sources.ts).
ALTER TABLE "intake_sync"."outbox" ADD COLUMN "sent_through" text;

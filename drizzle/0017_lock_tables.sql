-- Issue 25 item 2: no login without a grant can stall a feed. The match lock, the source lock, the
-- feed leases and the replicas' membership were advisory locks with predictable keys, and any login
-- may take any advisory lock (pg_locks shows every key held, so a secret key would leak once used).
-- They are now rows of tables only the runtime role (and the owner) may write, and a row lock needs
-- UPDATE privilege: a role without it cannot take, hold or queue for one.
--
-- feed_locks: one row per (feed, lock). A page apply takes its feed's 'match' row FOR SHARE, a
-- registration or rematch FOR UPDATE (through _feed_lock, sql/api); outbox claims take 'source' FOR
-- SHARE, the start of an API version migration FOR UPDATE. Held only for the transaction, like the
-- advisory locks they replace (a row lock never outlives its transaction, so vacuum is not held back
-- beyond what the transaction itself holds). The row ('', 'claim') serialises the claims of the
-- feeds of a schema (src/db/feed-registry.ts) by a run or the demo.
CREATE TABLE "intake_sync"."feed_locks" (
  "feed" text NOT NULL,
  "lock" text NOT NULL,
  CONSTRAINT "feed_locks_pkey" PRIMARY KEY ("feed", "lock"),
  CONSTRAINT "feed_locks_lock_check" CHECK ("lock" IN ('match', 'source', 'claim'))
);
--> statement-breakpoint
INSERT INTO "intake_sync"."feed_locks" ("feed", "lock")
SELECT c."feed", l."lock" FROM "intake_sync"."feed_checkpoints" c CROSS JOIN (VALUES ('match'), ('source')) AS l("lock")
ON CONFLICT DO NOTHING;
--> statement-breakpoint
-- feed_leases: who leads each feed (src/sync/leadership/lease-session.ts). A lease is free when it
-- expired (no heartbeat within the TTL) or when its holder's backend (holder_pid) is gone, so a
-- killed holder's feeds are taken over at once, as with the session lock before. Every statement on
-- it is a single autocommit statement: no transaction stays open for a lease's lifetime.
CREATE TABLE "intake_sync"."feed_leases" (
  "feed" text PRIMARY KEY NOT NULL,
  -- the lease session's random id (one per process's lock session)
  "holder" text NOT NULL,
  -- pg_backend_pid() of the holder's lock session: the lease dies with that session
  "holder_pid" integer NOT NULL,
  "acquired_at" timestamptz NOT NULL,
  "heartbeat_at" timestamptz NOT NULL,
  "expires_at" timestamptz NOT NULL
);
--> statement-breakpoint
-- lease_members: the live replicas of a deployment (was: holders of a shared advisory lock), for
-- the fair share of the feeds. A member counts while its backend lives and its heartbeat is recent.
CREATE TABLE "intake_sync"."lease_members" (
  "member" text PRIMARY KEY NOT NULL,
  "backend_pid" integer NOT NULL,
  "expires_at" timestamptz NOT NULL
);
--> statement-breakpoint
REVOKE ALL ON TABLE "intake_sync"."feed_locks", "intake_sync"."feed_leases", "intake_sync"."lease_members" FROM PUBLIC;
